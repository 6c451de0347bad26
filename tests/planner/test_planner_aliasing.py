"""Alias groups: views, in-place ops and copy-free concats, worked by hand."""

from __future__ import annotations

import copy
from itertools import combinations

from planner_helpers import memory_hazards

from dnn64build.planner.aliasing import find_aliases
from dnn64build.planner.checker import check_plan
from dnn64build.planner.dagplan import PlanParams, plan_dag
from dnn64build.planner.planfile import group_problem
from dnn64build.planner.problem import lower_bound
from dnn64build.planner.schedule import Dag, Op, lifetimes


def _aliases(dag: Dag, kinds=frozenset({"view", "inplace", "concat"})):
    order = list(range(len(dag.ops)))
    return find_aliases(dag, order, lifetimes(dag, order), 16, kinds)


CHAIN = Dag(
    (
        Op("conv", ("x", "w"), ("a",)),
        Op("relu", ("a",), ("b",), "inplace"),
        Op("flat", ("b",), ("c",), "view"),
        Op("fc", ("c", "w2"), ("y",)),
    ),
    {"x": 256, "a": 512, "b": 512, "c": 512, "y": 64},
    ("x",),
    ("y",),
)


def test_view_and_inplace_chain_share_the_producer_buffer():
    # relu overwrites a (a's last reader is relu); flat is b reinterpreted.
    assert _aliases(CHAIN) == {"b": ("a", 0), "c": ("a", 0)}


def test_chain_plan_uses_one_buffer_for_a_b_c():
    # Steps: conv 0, relu 1, flat 2, fc 3. Group a+b+c lives 0..3 (512 bytes);
    # x lives 0..0 (256), y 3..3 (64): live bytes 768, 512, 512, 576 -> bound 768.
    plan = plan_dag(CHAIN)
    assert check_plan(plan) is None and memory_hazards(CHAIN, plan) == []
    assert plan["lower_bound_bytes"] == 768 and plan["arena_bytes"] == 768
    by_name = {b["name"]: b for b in plan["buffers"]}
    assert (by_name["a"]["first"], by_name["a"]["last"]) == (0, 3)
    assert by_name["b"]["alias_of"] == "a" and by_name["c"]["alias_offset"] == 0
    assert by_name["b"]["offset"] == by_name["a"]["offset"]


def test_no_inplace_over_a_tensor_read_later():
    dag = Dag(
        (
            Op("conv", ("x",), ("a",)),
            Op("relu", ("a",), ("b",), "inplace"),
            Op("add", ("a", "b"), ("y",), "inplace"),  # a is still read here
        ),
        {"x": 64, "a": 64, "b": 64, "y": 64},
        ("x",),
        ("y",),
    )
    # relu may not overwrite a; add (last reader of a and b) may overwrite a.
    assert _aliases(dag) == {"y": ("a", 0)}


def test_residual_add_writes_into_the_input_that_dies_there():
    """The skip (first input) is read again after the Add, so the sum goes over the
    branch (second input); the plan checker and the hazard scan agree."""
    dag = Dag(
        (
            Op("stem", ("x",), ("s",)),
            Op("branch", ("s",), ("b",)),
            Op("add", ("s", "b"), ("r",), "inplace"),
            Op("head", ("s", "r"), ("y",)),
        ),
        {"x": 64, "s": 64, "b": 64, "r": 64, "y": 64},
        ("x",),
        ("y",),
    )
    assert _aliases(dag) == {"r": ("b", 0)}
    plan = plan_dag(dag)
    assert check_plan(plan) is None and not memory_hazards(dag, plan)


def test_no_inplace_over_a_model_input():
    dag = Dag((Op("relu", ("x",), ("y",), "inplace"),), {"x": 64, "y": 64}, ("x",), ("y",))
    assert _aliases(dag) == {}


def test_concat_parts_are_laid_out_inside_the_output():
    # p (48 bytes) and q (32 bytes) go to e at offsets 0 and 48; 48 is a multiple of 16.
    dag = Dag(
        (
            Op("p", ("x",), ("p",)),
            Op("q", ("x",), ("q",)),
            Op("cat", ("p", "q"), ("e",), "concat"),
            Op("head", ("e",), ("y",)),
        ),
        {"x": 16, "p": 48, "q": 32, "e": 80, "y": 16},
        ("x",),
        ("y",),
    )
    assert _aliases(dag) == {"p": ("e", 0), "q": ("e", 48)}
    plan = plan_dag(dag)
    assert check_plan(plan) is None and memory_hazards(dag, plan) == []


def test_concat_part_at_an_unaligned_offset_is_copied():
    dag = Dag(
        (
            Op("p", ("x",), ("p",)),
            Op("q", ("x",), ("q",)),
            Op("cat", ("p", "q"), ("e",), "concat"),
        ),
        {"x": 16, "p": 40, "q": 32, "e": 72},
        ("x",),
        ("e",),
    )
    assert _aliases(dag) == {"p": ("e", 0)}  # q would start at 40


def test_switching_a_kind_off():
    assert _aliases(CHAIN, frozenset({"view"})) == {"c": ("b", 0)}


def test_hazard_checker_sees_an_unsafe_share():
    # Put y over a while a is still read by add: the independent check must object.
    dag = Dag(
        (
            Op("conv", ("x",), ("a",)),
            Op("relu", ("a",), ("b",)),
            Op("add", ("a", "b"), ("y",)),
        ),
        {"x": 64, "a": 64, "b": 64, "y": 64},
        ("x",),
        ("y",),
    )
    plan = plan_dag(dag)
    bad = copy.deepcopy(plan)
    by_name = {b["name"]: b for b in bad["buffers"]}
    by_name["b"]["offset"] = by_name["a"]["offset"]
    assert memory_hazards(dag, plan) == []
    assert any("relu writes b over a" in p for p in memory_hazards(dag, bad))


# Two-level U-Net: skips s1 (1024 bytes) and s2 (256) wait for their concats while the
# network below runs; u1/u2 are the up-convolutions, born just before their concats.
UNET = Dag(
    (
        Op("enc1", ("x",), ("s1",)),
        Op("down1", ("s1",), ("d1",)),
        Op("enc2", ("d1",), ("s2",)),
        Op("down2", ("s2",), ("d2",)),
        Op("mid", ("d2",), ("m",)),
        Op("up2", ("m",), ("u2",)),
        Op("cat2", ("s2", "u2"), ("c2",), "concat"),
        Op("dec2", ("c2",), ("e2",)),
        Op("up1", ("e2",), ("u1",)),
        Op("cat1", ("s1", "u1"), ("c1",), "concat"),
        Op("dec1", ("c1",), ("y",)),
    ),
    {"x": 256, "s1": 1024, "d1": 256, "s2": 256, "d2": 512, "m": 1024, "u2": 256, "c2": 512,
     "e2": 256, "u1": 1024, "c1": 2048, "y": 64},
    ("x",),
    ("y",),
)


def _bound(dag: Dag, copied: frozenset) -> int:
    order = list(range(len(dag.ops)))
    spans = lifetimes(dag, order)
    aliases = find_aliases(dag, order, spans, 16, copied=copied)
    return lower_bound(group_problem(dag.sizes, spans, aliases, 16)).bytes


def test_concat_copies_the_skip_whose_slot_would_be_held_through_the_network():
    """Placing s1 inside c1 holds c1's 2048 bytes from enc1 on; copying s1 at cat1 costs
    its 1024 bytes there instead. The plan's bound is the best of every subset of copied
    parts and of no concat aliasing (brute force), below both all-or-nothing choices."""
    parts = [("cat2", "s2"), ("cat2", "u2"), ("cat1", "s1"), ("cat1", "u1")]
    subsets = [frozenset(c) for k in range(len(parts) + 1) for c in combinations(parts, k)]
    brute = min(_bound(UNET, s) for s in subsets)
    plain = lower_bound(group_problem(UNET.sizes, lifetimes(UNET, range(11)), _aliases(
        UNET, frozenset({"view", "inplace"})), 16)).bytes
    plan = plan_dag(UNET, PlanParams(scheduler="graph"))
    assert plan["lower_bound_bytes"] == brute < min(_bound(UNET, frozenset()), plain)
    entry = {b["name"]: b for b in plan["buffers"]}
    assert "alias_of" not in entry["s1"] and entry["u1"]["alias_of"] == "c1"
    assert check_plan(plan) is None and memory_hazards(UNET, plan) == []
