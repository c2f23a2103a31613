"""``python -m eval_runners ...``: the `pace` command line (its `run` and `instances` commands among the others),
with pace's one-line error handling."""
from warehouse.cli import main

main()
