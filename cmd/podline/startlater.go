package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// notifierRetryPeriod is how often podline tries again to make the cgroup
// notifier that could not be made at start (no inotify instance left):
// until then container exits come from the other sources, so a period
// costs no exit, only the notifier's promptness.
const notifierRetryPeriod = 10 * time.Second

// startLater calls start every period until it succeeds, and returns what
// it made; it returns ctx's error if ctx ends first. start's errors are
// expected (the resource is still short) and not reported.
func startLater[T any](ctx context.Context, period time.Duration, start func() (T, error)) (T, error) {
	var made T
	err := wait.PollUntilContextCancel(ctx, period, false, func(context.Context) (bool, error) {
		v, err := start()
		if err != nil {
			return false, nil
		}
		made = v
		return true, nil
	})
	return made, err
}
