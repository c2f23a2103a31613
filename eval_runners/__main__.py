from eval_runners.cli import main

main()
