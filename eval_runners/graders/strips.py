"""Grounded STRIPS tasks from PDDL text, for the planning graders (planbench, acp_gen).

Parsing and grounding are done by the maintained ``unified-planning`` package (optional extra
``planning``); this module only turns its grounded problem into sets of atom strings so that plan
validation, applicable actions, progression and small exhaustive searches are plain set
arithmetic. Atoms and actions are lower-case strings in PDDL form: ``(on a b)``,
``(unstack a b)``.

Only what the graders need is supported: conjunctive (possibly negative) preconditions and
unconditional add / delete effects. Anything else (conditional effects, numeric fluents,
disjunctive goals) raises :class:`UnsupportedTask`, which the graders report as a grader error,
never as a silent 0.
"""
from __future__ import annotations

import functools
import threading
from collections import deque
from dataclasses import dataclass


class UnsupportedTask(ValueError):
    pass


@dataclass(frozen=True)
class Operator:
    name: str                      # "(unstack a b)"
    pre: frozenset                 # atoms that must hold
    neg: frozenset                 # atoms that must not hold
    add: frozenset
    dele: frozenset

    def applicable(self, state: frozenset) -> bool:
        return self.pre <= state and not (self.neg & state)

    def apply(self, state: frozenset) -> frozenset:
        return (state - self.dele) | self.add


def normalize_action(text: str) -> str:
    """'( Unstack  a b )', 'unstack(a, b)', 'unstack a b' -> '(unstack a b)'."""
    t = text.strip().lower()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    t = t.replace(",", " ").replace("(", " ").replace(")", " ")
    return "(" + " ".join(t.split()) + ")"


def _atom(node) -> str:
    name = node.fluent().name.lower()
    args = [str(a).lower() for a in node.args]
    return "(" + " ".join([name] + args) + ")"


def _literals(nodes) -> tuple[set, set]:
    pos, neg = set(), set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.is_and():
            stack.extend(n.args)
        elif n.is_fluent_exp():
            pos.add(_atom(n))
        elif n.is_not() and n.arg(0).is_fluent_exp():
            neg.add(_atom(n.arg(0)))
        elif n.is_true():
            continue
        else:
            raise UnsupportedTask(f"precondition or goal {n} is not a conjunction of literals")
    return pos, neg


class Task:
    """A grounded STRIPS task: ``init`` (atoms), ``goal`` / ``goal_neg`` and ``operators``."""

    def __init__(self, init: frozenset, goal: frozenset, goal_neg: frozenset, operators: list[Operator]):
        self.init = init
        self.goal = goal
        self.goal_neg = goal_neg
        self.operators = operators
        self.by_name = {o.name: o for o in operators}

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    def from_pddl(cls, domain: str, problem: str) -> "Task":
        with _UP_LOCK:                    # unified-planning's global environment is not thread-safe
            return _from_pddl_cached(domain.lower(), problem.lower())

    # ---- queries ----------------------------------------------------------------------------
    def is_goal(self, state: frozenset, goal: frozenset | None = None) -> bool:
        """The task's goal (positive and negative literals), or the atoms ``goal`` if given."""
        if goal is None:
            return self.goal <= state and not (self.goal_neg & state)
        return goal <= state

    def applicable(self, state: frozenset) -> list[Operator]:
        return [o for o in self.operators if o.applicable(state)]

    def run(self, plan: list[str], state: frozenset | None = None) -> frozenset | None:
        """State after executing ``plan`` from ``state`` (default init); None if a step is
        unknown or inapplicable."""
        s = self.init if state is None else state
        for step in plan:
            op = self.by_name.get(normalize_action(step))
            if op is None or not op.applicable(s):
                return None
            s = op.apply(s)
        return s

    def first_failure(self, plan: list[str]) -> int | None:
        """0-based index of the first step that is unknown or inapplicable (None: all apply)."""
        s = self.init
        for i, step in enumerate(plan):
            op = self.by_name.get(normalize_action(step))
            if op is None or not op.applicable(s):
                return i
            s = op.apply(s)
        return None

    def validates(self, plan: list[str]) -> bool:
        end = self.run(plan)
        return end is not None and self.is_goal(end)

    def shortest_plan_length(self, state: frozenset | None = None, goal: frozenset | None = None,
                             max_states: int = 200_000) -> int | None:
        """Breadth-first search (unit costs). None when the goal is unreachable; raises
        :class:`SearchLimit` when ``max_states`` states were expanded without an answer."""
        start = self.init if state is None else state
        if self.is_goal(start, goal):
            return 0
        seen = {start}
        frontier = deque([(start, 0)])
        while frontier:
            s, d = frontier.popleft()
            for o in self.operators:
                if not o.applicable(s):
                    continue
                t = o.apply(s)
                if t in seen:
                    continue
                if self.is_goal(t, goal):
                    return d + 1
                seen.add(t)
                if len(seen) > max_states:
                    raise SearchLimit(f"more than {max_states} states")
                frontier.append((t, d + 1))
        return None


class SearchLimit(RuntimeError):
    pass


_UP_LOCK = threading.Lock()


@functools.lru_cache(maxsize=64)
def _from_pddl_cached(domain: str, problem: str) -> Task:
    from unified_planning.engines import CompilationKind
    from unified_planning.io import PDDLReader
    from unified_planning.plans import ActionInstance
    from unified_planning.shortcuts import Compiler, get_environment

    get_environment().credits_stream = None          # no banner on stdout
    prob = PDDLReader().parse_problem_string(domain, problem)
    with Compiler(problem_kind=prob.kind, compilation_kind=CompilationKind.GROUNDING) as grounder:
        res = grounder.compile(prob, CompilationKind.GROUNDING)
    gp = res.problem
    ops = []
    for a in gp.actions:
        pre, neg = _literals(a.preconditions)
        add, dele = set(), set()
        for e in a.effects:
            if e.is_conditional() or not e.fluent.is_fluent_exp():
                raise UnsupportedTask(f"action {a.name} has a conditional or non-boolean effect")
            (add if e.value.is_true() else dele).add(_atom(e.fluent))
        lifted = res.map_back_action_instance(ActionInstance(a))
        name = "(" + " ".join([lifted.action.name.lower()] + [str(p).lower() for p in lifted.actual_parameters]) + ")"
        ops.append(Operator(name, frozenset(pre), frozenset(neg), frozenset(add), frozenset(dele - add)))
    init = frozenset(_atom(k) for k, v in gp.initial_values.items() if v.is_true())
    goal, goal_neg = _literals(gp.goals)
    return Task(init, frozenset(goal), frozenset(goal_neg), ops)
