#!/usr/bin/env python3
"""Unit test of the sweep's checker (check.py) on hand-written summaries that
follow the contract (fixtures/*.good.json), a summary of the detector before
the contract (fixtures/loader.old.json, captured from a real run), and real
ground truths of causegen (fixtures/*.truth.json). No root, no ingero-top.
Run: python3 tests/sweep/test_check.py (exit 0 when every test passes)."""
import copy
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check  # noqa: E402

FX = os.path.join(HERE, "fixtures")


def resort(s):
    """Puts chains in the contract's order after a test changed one."""
    s["chains"].sort(key=lambda c: (0 if c.get("active", True) else 1,
                                    1 if c.get("severity") == "INFO" else 0, -c["impact"]))


def load(name):
    with open(os.path.join(FX, name)) as f:
        return json.load(f)


def fails(r):
    return "\n".join(r.failed)


class Loader(unittest.TestCase):
    """loader.truth.json: one loader; the feeder waits on it 67.2 % of its wall."""

    def setUp(self):
        self.t = load("loader.truth.json")
        self.good = load("loader.good.json")

    def run_case(self, live, replay=None, **kw):
        return check.check_case("loader", self.t, live, replay, ["loader_wait"], **kw)

    def test_truth_causes(self):
        c = check.truth_causes(self.t)
        self.assertAlmostEqual(c["loader_wait"], 0.6723, places=3)
        self.assertAlmostEqual(c["gpu_bound"], 0.2907, places=3)
        self.assertAlmostEqual(sum(c.values()), 1.0, delta=0.002)
        self.assertEqual(check.truth_problems(self.t), [])

    def test_good_passes(self):
        r = self.run_case(self.good, copy.deepcopy(self.good))
        self.assertEqual(r.status, "pass", r.report())
        self.assertEqual((r.true_top, r.reported_top), ("loader_wait", "loader_wait"))
        self.assertAlmostEqual(r.errors["loader_wait"], 0.66 - 0.6723, places=3)
        self.assertEqual(sorted(r.errors), ["cpu_contention", "gpu_bound", "loader_wait"])

    def test_old_detector_lacks_the_contract(self):
        r = self.run_case(load("loader.old.json"))
        self.assertEqual(r.status, "contract")
        self.assertIn("chains[0] (host_starvation) lacks impact", fails(r))
        self.assertIn("class 'host_starvation' is not a contract class", fails(r))
        self.assertIn(f"procs[pid {self.t['pid']}] has no time{{}}", fails(r))
        self.assertIn("impact of loader_wait 0.0 %", fails(r))

    def test_empty_summary(self):
        r = self.run_case({"type": "summary"})
        self.assertEqual(r.status, "contract")
        self.assertEqual(r.contract, ["no chains[]"])

    def test_wrong_culprit(self):
        s = copy.deepcopy(self.good)
        s["chains"][0].update(culprit_pid=4242, culprit_comm="cc1")
        r = self.run_case(s)
        self.assertEqual(r.status, "fail")
        self.assertIn("culprit cc1[4242] is a producer", fails(r))
        s["chains"][0].update(culprit_pid=17700, culprit_comm="python3")  # right pid, old name
        self.assertIn("culprit python3[17700] is a producer", fails(self.run_case(s)))

    def test_impact_off_by_more_than_7_points(self):
        s = copy.deepcopy(self.good)
        s["chains"][0]["impact"] = 0.59  # 8.2 points under
        r = self.run_case(s)
        self.assertEqual(fails(r), "impact of loader_wait 59.0 % (workload 67.2 %, ± 7.0 %)")
        s["chains"][0]["impact"] = 0.61  # 6.2 points under: within
        self.assertEqual(self.run_case(s).status, "pass")

    def test_missing_intended_chain_counts_as_zero(self):
        s = copy.deepcopy(self.good)
        del s["chains"][0]
        r = self.run_case(s)
        self.assertIn("top chain gpu_bound (29.1 %); the largest cause is loader_wait", fails(r))
        self.assertIn("impact of loader_wait 0.0 %", fails(r))

    def test_top_chain_must_be_the_largest_cause(self):
        s = copy.deepcopy(self.good)
        s["chains"][0], s["chains"][1] = s["chains"][1], s["chains"][0]
        r = self.run_case(s)
        self.assertIn("chains[] are not ordered by impact", fails(r))
        self.assertIn("top chain gpu_bound", fails(r))

    def test_quiet_cause_stays_info(self):
        s = copy.deepcopy(self.good)
        s["chains"][2]["severity"] = "LOW"
        resort(s)
        r = self.run_case(s)
        self.assertEqual(fails(r), "cpu_contention at 2.8 % of wall time raises LOW "
                                   "(at most INFO)")

    def test_foreign_chain(self):
        s = copy.deepcopy(self.good)
        s["chains"].append(dict(s["chains"][2], pid=1, impact=0.01))
        self.assertIn("for pid 1, not the workload's", fails(self.run_case(s)))

    def test_replay_must_match(self):
        rep = copy.deepcopy(self.good)
        rep["chains"][0]["impact"] = 0.675  # 1.5 points: too far
        self.assertIn("replay: loader_wait", fails(self.run_case(self.good, rep)))
        rep["chains"][0]["impact"] = 0.665  # 0.5 points: the same
        rep["chains"][1]["severity"] = "LOW"
        self.assertEqual(fails(self.run_case(self.good, rep)),
                         "replay: gpu_bound culprit [0]: LOW 0.29 (live INFO 0.29)")
        rep = copy.deepcopy(self.good)
        del rep["chains"][2]
        self.assertIn("replay: the same chains as live (2 vs 3)",
                      fails(self.run_case(self.good, rep)))

    def test_parts(self):
        s = copy.deepcopy(self.good)
        tm = s["procs"][0]["time"]
        tm["parts"]["task_wait"] -= 500000000  # 10 points moved to unknown
        tm["parts"]["unknown"] += 500000000
        r = self.run_case(s)
        self.assertIn("part task_wait 57.2 % (workload 67.2 %)", fails(r))
        self.assertIn("part unknown 10.0 % (workload 0.0 %)", fails(r))
        tm["parts"]["unknown"] += 100000000  # no longer adds up
        self.assertIn("parts add up to", fails(self.run_case(s)))
        tm["tid"] = 1
        self.assertIn("parts: feeding thread tid 1", fails(self.run_case(s)))
        del tm["parts"]["fault"]
        self.assertIn("time lacks parts.fault", fails(self.run_case(s)))

    def test_bad_values_do_not_crash(self):
        s = copy.deepcopy(self.good)
        s["chains"][0]["impact"] = "66 %"
        s["chains"][1]["severity"] = "SEVERE"
        s["procs"][0]["time"]["parts"]["api"] = None
        r = self.run_case(s)
        self.assertIn("impact '66 %' is not a fraction", fails(r))
        self.assertIn("severity 'SEVERE'", fails(r))
        self.assertIn("wall_ns or a part is not a number", fails(r))


class Healthy(unittest.TestCase):
    def setUp(self):
        self.t = load("healthy.truth.json")
        self.good = load("healthy.good.json")

    def run_case(self, s):
        return check.check_case("healthy", self.t, s, None, ["gpu_bound"], healthy=True)

    def test_good_passes(self):
        self.assertEqual(self.run_case(self.good).status, "pass")

    def test_no_chains_is_fine_when_healthy(self):
        s = copy.deepcopy(self.good)
        s["chains"] = []
        r = self.run_case(s)
        self.assertIn("impact of gpu_bound 0.0 %", fails(r))  # the GPU wait must be stated
        self.assertEqual((r.true_top, r.reported_top), ("gpu_bound", "none"))

    def test_alarm_on_healthy_loop(self):
        s = copy.deepcopy(self.good)
        storm = next(c for c in s["chains"] if c["class"] == "sync_storm")
        storm.update(severity="MEDIUM", impact=0.004)
        resort(s)
        r = self.run_case(s)
        self.assertIn("healthy loop: sync_storm is MEDIUM (at most LOW)", fails(r))
        self.assertIn("sync_storm at 0.4 % of wall time raises MEDIUM", fails(r))
        storm.update(severity="LOW", impact=0.05)  # LOW is allowed, 5 % is not 0.4 %
        resort(s)
        # a LOW chain now leads (actionable before INFO): it is also not the
        # largest cause, since no problem reaches 5 %
        self.assertEqual(fails(self.run_case(s)),
                         "top chain sync_storm (0.4 %); the largest cause is gpu_bound 97.9 %\n"
                         "sync_storm at 0.4 % of wall time raises LOW (at most INFO)")


class Disturbed(unittest.TestCase):
    """io-disturbed.truth.json: an io case whose CPU another job took 87.8 %."""

    def setUp(self):
        self.t = load("io-disturbed.truth.json")
        self.good = load("io-disturbed.good.json")

    def test_judged_against_the_measure(self):
        r = check.check_case("io", self.t, self.good, None, ["block_io"])
        self.assertEqual(r.status, "pass", r.report())
        self.assertIn(("note", "disturbed: 87.8 % preempted by outside load (no hogs in "
                               "this case); judged against the measure"), r.lines)

    def test_block_io_culprit_names_the_device(self):
        c = next(x for x in self.good["chains"] if x["class"] == "block_io")
        r = check.Result("io")
        self.assertTrue(check.check_culprit(r, c, self.t, False))
        bare = dict(c, summary="causegen blocked on block I/O", evidence={})
        self.assertFalse(check.check_culprit(r, bare, self.t, False))
        self.assertIn("names the device or file system (one of ['vda', '254:0', 'ext4', "
                      "'/dev/vda']; found [])", fails(r))
        other = dict(c, culprit_pid=1, culprit_comm="jbd2/vda-8")
        self.assertFalse(check.check_culprit(check.Result("io"), other, self.t, False))

    def test_hog_culprit(self):
        t = copy.deepcopy(self.t)
        t["helpers"] = [{"pid": 50, "comm": "cg-hog-0", "role": "hog", "cpu": 1}]
        c = dict(self.good["chains"][0], culprit_pid=50, culprit_comm="cg-hog-0")
        self.assertTrue(check.check_culprit(check.Result("x"), c, t, False))
        c.update(culprit_comm="cc1")
        self.assertFalse(check.check_culprit(check.Result("x"), c, t, False))


class Truth(unittest.TestCase):
    def test_problems(self):
        t = load("loader.truth.json")
        t["residue"]["wall_ns"] += 10
        self.assertIn("!= wall", "\n".join(check.truth_problems(t)))
        t = load("loader.truth.json")
        t["parts"]["unknown"] += 1
        self.assertIn("parts add up to", "\n".join(check.truth_problems(t)))
        t = load("loader.truth.json")
        t["residue"]["wall_ns"] = t["wall_ns"] // 10
        t["phases"]["sync"]["wall_ns"] -= t["residue"]["wall_ns"] - load(
            "loader.truth.json")["residue"]["wall_ns"]
        self.assertIn("residue 10.0 % > 3.0 %", "\n".join(check.truth_problems(t)))

    def test_command_line(self):
        def run(live):
            return subprocess.run([sys.executable, os.path.join(HERE, "check.py"), "--truth",
                                   os.path.join(FX, "loader.truth.json"), "--live",
                                   os.path.join(FX, live), "--intended", "loader_wait"],
                                  capture_output=True, text=True)
        p = run("loader.good.json")
        self.assertEqual((p.returncode, p.stdout.splitlines()[-1]), (0, "case: pass"))
        p = run("loader.old.json")
        self.assertEqual((p.returncode, p.stdout.splitlines()[-1], p.stderr),
                         (1, "case: contract", ""))
        p = run("nonexistent.json")
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL live: cannot read", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)
