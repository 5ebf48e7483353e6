package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// The reliability scenario (issue 15 §1, its first cases): faults a node
// sees, each case stating the invariant it checks, what it measured and
// whether it held. On the fake CRI, containerd-like latencies:
//
//   - kill -9 of podline mid-start (at 25 %, 50 % and 90 % of N pods
//     Running), mid-teardown (half the sandboxes gone) and idle; podline is
//     restarted on the same directories and the runtime is checked until no
//     pod has a duplicate sandbox or container, none is lost, nothing is
//     orphaned and nothing restarted. Each run has a fresh fake CRI and
//     fresh directories.
//   - a hanging runtime: one pod's RunPodSandbox never answers; the others
//     must start, and the stuck one's status must say why.
//   - a slow runtime: every call takes a second longer; every pod starts.
//   - on the harness's real containerd: containerd stopped (SIGTERM) or
//     killed (SIGKILL) and started again under podline, with manifests
//     removed and added during the outage.
//
// A case that fails its invariant is a result, not an error of the
// suite: it is reported with its evidence, and the scenario then exits
// non-zero.
const (
	relKill      = "kill"               // kill -9 mid-start at frac of the pods Running
	relTeardown  = "teardown"           // kill -9 with half the sandboxes gone
	relIdle      = "idle"               // kill -9 with every pod Running
	relHang      = "hang"               // one pod's RunPodSandbox hangs
	relSlow      = "slow"               // every call 1 s slower
	relHangStat  = "hang-status"        // one pod's ContainerStatus hangs as its container exits
	relCtrdStop  = "containerd-restart" // containerd stopped and started under podline
	relCtrdKill  = "containerd-kill-9"  // containerd killed -9 and started under podline
	relRuntime   = result.RuntimeFakeContainerd
	relConverge  = 10 * time.Second // the target: restart → every invariant holds
	relLimit     = 90 * time.Second // how long a run waits for the invariants
	relStability = 3 * time.Second  // they must still hold this much later
)

// relCase is one case of the plan, and which of its runs.
type relCase struct {
	kind      string
	frac      float64 // relKill: the share of pods Running when podline is killed
	pods      int
	run, runs int
}

// relPasses repeats the plan in passes, each case once per pass, so that
// a scenario cut short still has every case once; the kill -9 cases run
// killRuns times in all, the others otherRuns.
func relPasses(plan []relCase, killRuns, otherRuns int) []relCase {
	var out []relCase
	for pass := 1; pass <= max(killRuns, otherRuns); pass++ {
		for _, c := range plan {
			c.runs = otherRuns
			if c.kind == relKill || c.kind == relIdle || c.kind == relTeardown {
				c.runs = killRuns
			}
			if pass <= c.runs {
				c.run = pass
				out = append(out, c)
			}
		}
	}
	return out
}

func (c relCase) name() string {
	if c.kind == relKill {
		return fmt.Sprintf("kill-9-at-%.0f%%", c.frac*100)
	}
	return map[string]string{relTeardown: "kill-9-mid-teardown", relIdle: "kill-9-idle",
		relHang: "hang-RunPodSandbox", relHangStat: "hang-ContainerStatus", relSlow: "slow-runtime-1s", relCtrdStop: relCtrdStop, relCtrdKill: relCtrdKill}[c.kind]
}

// relPlan lists the cases in priority order; only, when not empty, keeps
// the cases named there.
func relPlan(quick bool, pods int, only []string) []relCase {
	n, hang, slow, ctrd := 1000, 100, 30, 100
	if quick {
		n, hang, slow, ctrd = 100, 20, 10, 10
	}
	if pods > 0 {
		n = pods
	}
	all := []relCase{
		{kind: relKill, frac: 0.25, pods: n}, {kind: relKill, frac: 0.50, pods: n}, {kind: relKill, frac: 0.90, pods: n},
		{kind: relTeardown, pods: n}, {kind: relIdle, pods: n},
		{kind: relHang, pods: hang}, {kind: relHangStat, pods: slow}, {kind: relSlow, pods: slow},
		{kind: relCtrdStop, pods: ctrd}, {kind: relCtrdKill, pods: ctrd},
	}
	if len(only) == 0 {
		return all
	}
	var out []relCase
	for _, c := range all {
		for _, o := range only {
			if c.name() == o || c.kind == o {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// relRun is what one run of a case measured and concluded.
type relRun struct {
	Case      string `json:"case"`
	Run       int    `json:"run"`
	Pods      int    `json:"pods"`
	Runtime   string `json:"runtime"`
	Invariant string `json:"invariant"`
	Pass      bool   `json:"pass"`
	Verdict   string `json:"verdict"` // why it passed or failed, in a line

	// kill -9 cases. At the kill: containers running and sandboxes ready
	// in the runtime. ConvergeSec: podline restarted → every invariant
	// holds (-1: not within relLimit).
	KilledRunning    int              `json:"killed_running,omitempty"`
	KilledReady      int              `json:"killed_ready_sandboxes,omitempty"`
	ConvergeSec      float64          `json:"converge_sec,omitempty"`
	CallsAfterKill   map[string]int64 `json:"calls_after_restart,omitempty"`
	Left             leftovers        `json:"leftovers"`
	Violations       map[string]int   `json:"violations,omitempty"` // at the end, per invariant
	ViolationSamples []string         `json:"violation_samples,omitempty"`

	// hang and slow cases: seconds and counts by name, and what podline
	// said, verbatim.
	Figures  map[string]float64 `json:"figures,omitempty"`
	Observed map[string]string  `json:"observed,omitempty"`

	// containerd cases: where the convergence went.
	Breakdown *convBreakdown `json:"breakdown,omitempty"`
}

// reliabilityScenario runs the plan and writes reliability-<rev>.json and
// .md into out; it fails when any run failed its invariants.
func (s *suite) reliabilityScenario(ctx context.Context, out string) error {
	cases := relPasses(relPlan(s.cfg.quick, s.cfg.relPods, splitList(s.cfg.relCases)), s.cfg.relRuns, s.cfg.relOther)
	if len(cases) == 0 {
		return fmt.Errorf("-reliability-cases %q: no such case", s.cfg.relCases)
	}
	name := "reliability-" + shortRev(ctx, s.cfg.repo)
	if s.cfg.relCases != "" {
		// A partial run must not overwrite the full one's report.
		name = "reliability-" + strings.NewReplacer(",", "+", "%", "").Replace(s.cfg.relCases) + "-" + shortRev(ctx, s.cfg.repo)
	}
	var last string
	var failed []string
	err := runCases(ctx, name, out, cases,
		func(relCase) int { return 1 },
		func(c relCase) string { return fmt.Sprintf("%s %d pods #%d/%d", c.name(), c.pods, c.run, c.runs) },
		func(c relCase, _ int, label string) (relRun, error) {
			r, err := s.relCase(ctx, c, c.run, label)
			if err == nil {
				progress("%s: %s: %s", label, verdict(r.Pass), r.Verdict)
				if !r.Pass {
					failed = append(failed, label)
				}
			}
			return r, err
		},
		func(runs []relRun, errs []string) error {
			last = relMarkdown(s.run, s.cfg, runs, errs)
			return writeCases(out, name, s.run, runs, errs, last)
		})
	fmt.Println(last)
	if len(failed) > 0 {
		err = errors.Join(err, fmt.Errorf("reliability: %d run(s) broke an invariant: %s", len(failed), strings.Join(failed, "; ")))
	}
	return err
}

func (s *suite) relCase(ctx context.Context, c relCase, n int, label string) (relRun, error) {
	r := relRun{Case: c.name(), Run: n, Pods: c.pods, Runtime: relRuntime}
	var err error
	switch c.kind {
	case relHang:
		err = s.relHang(ctx, &r, label)
	case relHangStat:
		err = s.relHangStatus(ctx, &r, label)
	case relSlow:
		err = s.relSlow(ctx, &r, label)
	case relCtrdStop, relCtrdKill:
		err = s.relContainerd(ctx, c.kind == relCtrdKill, &r, label)
	default:
		err = s.relKill(ctx, c, &r, label)
	}
	return r, err
}

func verdict(pass bool) string {
	if pass {
		return "PASS"
	}
	return "FAIL"
}

// shortRev is the repository's HEAD, abbreviated, for the report's name.
func shortRev(ctx context.Context, repo string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
