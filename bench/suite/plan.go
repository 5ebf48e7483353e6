package main

import (
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// caseSpec is one agent process from start to stop: density, then
// optionally idle and churn on the same pods.
type caseSpec struct {
	scenario string // the -scenarios name that selects it
	key      result.Key
	idle     bool
	churn    *churnSpec
}

func key(agent, mode, runtime string, pods int) result.Key {
	return result.Key{Agent: agent, Mode: mode, Runtime: runtime, Pods: pods}
}

const (
	podline = result.AgentPodline
	kubelet = result.AgentKubelet
	dflt    = result.ModeDefault
	fakeC   = result.RuntimeFakeContainerd
	fakeZ   = result.RuntimeFakeZero
	real    = result.RuntimeContainerd
)

// plan lists the cases of a full or a quick run, in the order they run.
// The real runtime has a scenario of its own (real.go).
// The idle scenario rides on the density cases flagged idle, and churn on
// the one flagged churn; with -scenarios=...,-idle they are skipped.
func plan(quick bool) []caseSpec {
	if quick {
		return []caseSpec{
			{scenario: "density", key: key(podline, dflt, fakeC, 50), idle: true,
				churn: &churnSpec{rate: 10, duration: 3 * time.Second, window: time.Second}},
			{scenario: "density", key: key(podline, dflt, fakeZ, 200)},
			{scenario: "ablations", key: key(podline, result.ModeQueueChannel, fakeC, 50), idle: true},
			{scenario: "ablations", key: key(podline, result.ModePLEGRelist, fakeC, 50), idle: true},
			{scenario: "kubelet", key: key(kubelet, dflt, fakeC, 50), idle: true},
		}
	}
	return []caseSpec{
		{scenario: "density", key: key(podline, dflt, fakeC, 100), idle: true},
		{scenario: "density", key: key(podline, dflt, fakeC, 1000), idle: true,
			churn: &churnSpec{rate: 20, duration: 60 * time.Second, window: 10 * time.Second}},
		{scenario: "density", key: key(podline, dflt, fakeC, 10000), idle: true},
		{scenario: "density", key: key(podline, dflt, fakeZ, 100)},
		{scenario: "density", key: key(podline, dflt, fakeZ, 1000)},
		{scenario: "density", key: key(podline, dflt, fakeZ, 10000)},
		{scenario: "ablations", key: key(podline, result.ModeQueueChannel, fakeC, 1000), idle: true},
		{scenario: "ablations", key: key(podline, result.ModePLEGRelist, fakeC, 1000), idle: true},
		{scenario: "ablations", key: key(podline, result.ModeQueueChannel, fakeZ, 10000)},
		// The start gate must not cost the fake runtime anything.
		{scenario: "ablations", key: key(podline, result.ModeStartsUnlimited, fakeC, 1000)},
		{scenario: "ablations", key: key(podline, result.ModeStartsUnlimited, fakeC, 10000)},
		{scenario: "ablations", key: key(podline, result.ModeStartsUnlimited, fakeZ, 10000)},
		{scenario: "kubelet", key: key(kubelet, dflt, fakeC, 100), idle: true},
		{scenario: "kubelet", key: key(kubelet, dflt, fakeC, 1000), idle: true},
		{scenario: "kubelet", key: key(kubelet, dflt, fakeZ, 100)},
		{scenario: "kubelet", key: key(kubelet, dflt, fakeZ, 1000)},
	}
}
