// Package cluster holds only tests: several `abctl daemon` processes
// (daemon.Run, the scripted executor) sharing one PostgreSQL database, as
// issue 34 runs them. The daemons are real processes, the test binary run
// again, so that one can be killed with SIGKILL in the middle of its runs;
// the test talks to them through the SDK over loopback HTTP and checks
// what the issue promises: each run executes once whichever daemon it was
// made through, a daemon that dies has its runs ended or finished by the
// others, a schedule fires once per fire time across all daemons, and a
// cancel made through one daemon stops a run executing on another.
//
// It needs PostgreSQL (internal/pgtest) and is skipped without it.
package cluster
