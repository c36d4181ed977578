// Package inproc holds in-process benchmarks of the daemon's handler
// (api.NewServer over a real store in a temporary directory), driven
// without the network, to find where a request's time goes:
//
//	go test ./bench/inproc -run '^$' -bench GetAgent -benchtime 3s -cpuprofile cpu.out
//	go tool pprof -top -cum cpu.out
//
// The store is seeded once per process with BENCH_AGENTS agents (default
// 10,000, the same agents as bench/seed) through the handler itself, which
// takes a while: every create is its own durable transaction.
package inproc
