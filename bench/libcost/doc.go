// Package libcost measures podline's hand-written helpers against the
// maintained libraries that cover the same ground: client-go's delaying
// workqueue against internal/delay, prometheus/procfs against the /proc
// readers of machine/, and prometheus/common's expfmt against the text
// that stats/ writes. (internal/mountinfo was measured the same way
// against moby/sys/mountinfo, and now parses with it.) Each comparison is a test that both give the same answer and a
// pair of benchmarks; the package docs of those packages quote the
// numbers.
//
// It lives in the bench module so that the libraries podline decided
// against stay out of the agent's module graph. It has no code of its own
// beyond the tests:
//
//	cd bench && go test -run '^$' -bench . -count 5 ./libcost/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat new.txt
package libcost
