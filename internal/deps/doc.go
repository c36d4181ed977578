// Package deps holds no code: its test checks the direction of the arrows
// between this module's packages (docs/architecture.md draws them), so that
// a change that would make the HTTP face import the engine, or the engine
// import the daemon, fails CI with the import that breaks the rule.
// ./scripts/deps prints the whole graph.
package deps
