"""Sampled lists for the finite-state route (`thm3.synth.finite`): random walks over the
moves the elements make on the control, so that every cell is in use however rarely random
draws hit it, lists steered to chosen control states, and lists folded from the initial
state as NumPy lanes, length by length."""
from __future__ import annotations

import numpy as np

from thm3.ir import Loop, Type, initial_state
from thm3.synth.finite_machine import Machine, cell_elements, plain_value


MIN_PER_END = 6         # sampled lists that end in each control state, at least, for the data's fits


def start_state(m: Machine, q: int, unit: int | None = None) -> tuple:
    """The state at control state q with the data 0 (data field `unit` 1), for `fold_left`."""
    fields = m.loop.fields
    start = [e.arg for e in initial_state(m.loop)]
    for j, v in zip(m.control, m.states[q]):
        start[j] = v
    for j in m.data:
        start[j] = (1 if j == unit else 0) if fields[j].type is Type.INT else (1.0 if j == unit else 0.0)
    return tuple(np.asarray(v) for v in start)


def _move_settings(m: Machine, dom, rng, settings: int):
    """(params, moves, their keys) for `settings` parameter settings with moves (`_moves`)."""
    cells = _cells_or_none(m)
    for _ in range(settings):
        params = dom.params(rng, small=True)
        moves = _moves(m, dom, rng, params, cells)
        if moves:
            yield params, moves, list(moves)


def _moves(m: Machine, dom, rng, params: dict, cells, pool_size: int = 32) -> dict[tuple, list]:
    """The moves a pool of elements makes on the control: (the state each reachable state
    goes to) -> the elements that make it.  The pool is random elements and one element
    of each cell (`cell_elements`, where it has them), so that a cell random draws rarely
    hit (x == 92) has its move (`cells`, from `_cells_or_none`); each element sorted by a
    one-step fold from each state."""
    from thm3.semantics.samples import fold_left
    loop = m.loop
    fields = loop.fields
    index = {st: i for i, st in enumerate(m.states)}
    n = len(m.states)
    starts = [start_state(m, q) for q in range(n)]
    # every start state at once, as NumPy lanes: one step a pool element
    batch = tuple(np.array([st[f] for st in starts]) for f in range(len(fields)))
    pool = dom.random_list(rng, params, pool_size, small=bool(rng.integers(0, 2)))
    if cells:
        pool += [tuple(0 if d.index else v for d, v in zip(loop.elements, e)) for e in cells
                 if dom.precondition_holds(e, params)]
    moves: dict[tuple, list] = {}
    for e in pool:
        end = fold_left(loop, [e], params, state=batch, dim=1)
        lanes = [np.broadcast_to(np.asarray(end[j]), (n,)) for j in m.control]
        act = []
        for q in range(n):
            got = index.get(tuple(plain_value(lane[q], fields[j].type) for j, lane in zip(m.control, lanes)))
            if got is None:
                break
            act.append(got)
        else:
            moves.setdefault(tuple(act), []).append(e)
    return moves


def _cells_or_none(m: Machine):
    """`cell_elements`, or None where Z3 cannot model a cell (random elements only then)."""
    try:
        return cell_elements(m)
    except Exception:           # noqa: BLE001 -- a Z3 failure: the pool stays random
        return None


def _walk(loop: Loop, moves: dict, rng, acts: list, prefix_len: int, tail=()) -> list:
    """A list that makes `prefix_len` random moves (each move equally likely, so rare cells
    appear) and then the moves of `tail`, each element drawn from its move's pool."""
    chosen = [acts[int(rng.integers(0, len(acts)))] for _ in range(prefix_len)] + list(tail)
    pick = [moves[a][int(rng.integers(0, len(moves[a])))] for a in chosen]
    return [tuple(k if d.index else v for d, v in zip(loop.elements, e)) for k, e in enumerate(pick)]


def steered_lists(m: Machine, dom, rng, targets: list[int], longest: int, settings: int = 4,
                   per_target: int = 6) -> list[tuple[list, dict, int]]:
    """(xs, params, r): for each target control state r, lists that end in it, a random
    walk over the control's moves (`_moves`) and then a shortest path to r, the elements
    drawn from the moves' pools, so the data vary."""
    from collections import deque
    out = []
    for params, moves, acts in _move_settings(m, dom, rng, settings):
        paths: dict[int, dict[int, list]] = {}

        def path(q: int, r: int):
            if q not in paths:          # breadth first from q: a shortest path to each state
                seen, todo = {q: []}, deque([q])
                while todo:
                    u = todo.popleft()
                    for a in acts:
                        v = a[u]
                        if v not in seen:
                            seen[v] = seen[u] + [a]
                            todo.append(v)
                paths[q] = seen
            return paths[q].get(r)
        for r in targets:
            for _ in range(per_target):
                n = int(rng.integers(0, longest))
                prefix = [acts[int(rng.integers(0, len(acts)))] for _ in range(n)]
                q = 0
                for a in prefix:
                    q = a[q]
                tail = path(q, r)
                if tail is None:
                    # r is not reachable past the prefix (copies of a lift that merge never
                    # part again): a shortest path from the initial state, the data varied
                    prefix, tail = [], path(0, r)
                if tail is not None:
                    out.append((_walk(m.loop, moves, rng, acts, 0, prefix + tail), params, r))
    return out


def walked_lists(m: Machine, dom, rng, count: int, longest: int, settings: int = 4) -> list[tuple[list, dict]]:
    """(xs, params): random walks over the control's moves (`_moves`), of random lengths
    below `longest`: every cell of the element in use, however rarely random draws hit it."""
    out = []
    for params, moves, acts in _move_settings(m, dom, rng, settings):
        for _ in range(count // settings):
            out.append((_walk(m.loop, moves, rng, acts, int(rng.integers(0, longest))), params))
    return out


def sampled_ends(m: Machine, by_state: dict, extra=()) -> list[tuple]:
    """Sampled lists folded from init: (xs, params, the data fields' values and 1, the
    control state the list ends in), each state of `by_state` reached by MIN_PER_END
    lists at least where steering reaches it."""
    from thm3.semantics.samples import Domain
    loop = m.loop
    fields = loop.fields
    rng = np.random.default_rng(0)
    dom = Domain(loop)
    samples = []
    # lists long enough that each end state is reached by words of several lengths: a
    # phase counter mod k reaches a state by one short word only below k + its index,
    # where what b adds from another state may be 0 on every sample (and then fit as 0)
    longest = min(16, max(6, 2 * len(m.states) + 2))
    for i in range(48 if longest == 6 else 96):
        params = dom.params(rng, small=True)
        n = int(rng.integers(0, longest))
        xs = dom.random_list(rng, params, n, small=i % 2 == 0)
        samples.append((xs, params))
    # each sampled list folded once from init: b's fields, and the control state it ends in
    # (random lists, then walks over the control's moves, folded together)
    lists = samples + walked_lists(m, dom, rng, 32, longest) + list(extra)
    folded = []
    for (xs, params), whole in zip(lists, fold_batched(loop, lists)):
        r_state = tuple(plain_value(whole[j], fields[j].type) for j in m.control)
        if r_state in m.states:
            folded.append((xs, params, [float(whole[j]) for j in m.data] + [1.0], m.states.index(r_state)))
    reached: dict[int, int] = {}
    for *_, r in folded:
        reached[r] = reached.get(r, 0) + 1
    if any(reached.get(r, 0) < MIN_PER_END for r in by_state):
        # random lists miss a state that only a few words reach, or reach it by too few
        # lists for b's data to vary there (a count of runs of five that every list ending
        # in a state had at 0): lists steered to it, past random walks twice as long
        # (fewer a target where there are many: 24 lists for each of 88 states made the
        # fits' Python loops the half of the synthesis of a 4-mode lexer's lift)
        steered = steered_lists(m, dom, rng, [r for r in by_state], 2 * longest,
                                 per_target=6 if len(by_state) <= 24 else 3)
        for (xs, params, r), whole in zip(steered, fold_batched(loop, [(xs, p) for xs, p, _ in steered])):
            folded.append((xs, params, [float(whole[j]) for j in m.data] + [1.0], r))
    return folded


def random_and_walked(m: Machine, deadline: float, seed: int, count: int, shortest: int, longest: int,
                       walks: int) -> list[tuple[list, dict]]:
    """`count` random lists of `shortest` to `longest` elements (small values every other
    one) and `walks` walks over the control's moves, each with its parameters."""
    from thm3.semantics.samples import Domain
    rng = np.random.default_rng(seed)
    dom = Domain(m.loop, deadline=deadline)
    lists = []
    for i in range(count):
        params = dom.params(rng, small=True)
        lists.append((dom.random_list(rng, params, int(rng.integers(shortest, longest + 1)), small=i % 2 == 0),
                      params))
    return lists + walked_lists(m, dom, rng, walks, min(16, max(8, 2 * len(m.states) + 2)))


def fold_batched(loop: Loop, lists: list[tuple[list, dict]]) -> list[tuple]:
    """Each (xs, params) folded from the initial state, as `fold_left` (dim 1) would: the
    lists of one length at once, their elements and parameters as NumPy lanes."""
    from thm3.semantics.samples import init_state, step
    by_len: dict[int, list[int]] = {}
    for n, (xs, _) in enumerate(lists):
        by_len.setdefault(len(xs), []).append(n)
    out: list = [None] * len(lists)
    names = [d.name for d in loop.params]
    for length, idx in by_len.items():
        lanes = len(idx)
        state = tuple(np.broadcast_to(np.asarray(v), (lanes,)).copy() for v in init_state(loop, 1))
        params = {p: np.array([lists[n][1][p] for n in idx]) for p in names}
        for t in range(length):
            element = tuple(np.array([lists[n][0][t][j] for n in idx]) for j in range(len(loop.elements)))
            state = tuple(np.broadcast_to(np.asarray(v), (lanes,)) for v in step(loop.left, state, element, params))
        for lane, n in enumerate(idx):
            out[n] = tuple(v[lane] for v in state)
    return out
