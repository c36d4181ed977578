// Package agentfile reads, checks, normalizes, compares and writes agent
// files: agent definitions kept as YAML or JSON files, the way `abctl
// apply`, `diff`, `get -o yaml` and `run` use them.
//
// # The file
//
// An agent file holds the definition with exactly the field names of the
// API's create body (client.AgentDefinition: title, description,
// workflow_definition with parameters and blocks, webhook_callback_url,
// ...), so a definition exported from the hosted service loads as it is.
// A YAML file may hold several agents, as documents separated by "---";
// a JSON file holds one. Three keys belong to abctl and are never sent:
//
//   - name: the agent's identity (below). In a file with one agent it may
//     be left out: the file's base name without its extension is used,
//     lowercased, with other characters than a-z, 0-9, ".", "_" and "-"
//     turned into "-" (agents/contact-form.yaml is "contact-form"). Each
//     agent of a file with several needs one. A name is 1 to 100 of those
//     characters, starting and ending with a letter or digit.
//   - tags: a mapping of tag keys to values, which the CLI sets on the
//     agent after creating or updating it. Keys are letters, digits, "_",
//     "." and "-" (at most 64, not starting with "skyvern." or "abctl.");
//     values are non-empty, at most 256 characters, without ",".
//   - id: the permanent id (wpid_...) of an agent that was not created
//     from its name: one made in the hosted service's editor or through
//     the API, exported with `abctl get agent ID -o yaml` (Render writes
//     it). With an id, the file updates that agent, and the name only
//     labels it.
//
// # Identity
//
// An agent's name is its identity across applies, with no state file:
// abctl creates the agent with the Idempotency-Key "abctl:<name>"
// (IdempotencyKey), and the service derives the agent's permanent id from
// the key: "wpid_" and the hex SHA-256 of "create_workflow", NUL, the
// organization id, NUL, the key (AgentID). The same name therefore always
// maps to the same agent of an organization: apply computes the id, finds
// the agent or learns that it does not exist, and a create that is
// repeated (after a lost reply, or by two pipelines at once) returns the
// same agent instead of making a second one. Renaming an agent in its file
// makes a new agent; the old one stays until it is deleted or pruned. An
// agent made elsewhere has an id that no name maps to: its file carries
// that id instead (see the id key above).
//
// # Checked loading
//
// Load and Parse report every problem of every file at once, each with
// its file, line, column, agent name and block label, in the form
//
//	agents/x.yaml:12:7: agent "x", block "fill_form": unknown key "navigaton_goal" (did you mean "navigation_goal"?)
//	agents/x.yaml:14:7: warning: agent "x", block "fill_form": unknown key "cache_actions", which the service ignores
//
// A file is read as a YAML node tree (yaml.v3 reads JSON too) and checked
// against a schema derived by reflection from the json tags of the
// client's wire types, so a field added to the client is known here with
// no change: wrong types, missing required keys (a tag without
// omitempty), repeated keys, YAML and JSON syntax errors are errors. The
// checked values are then written as JSON and decoded by the client, and
// the client's AgentDefinition.Validate, which the daemon runs too, checks
// what the service checks (identifiers, unique labels and parameter keys,
// reserved <label>_output keys, parameter_keys and loop_over_parameter_key
// that name a parameter or a block's output, a for_loop with something to
// loop over, a known proxy_location name, the finally block); its
// locations are mapped back to lines through the node tree. Those are
// errors: the agent does not load.
//
// What the service accepts but abctl cannot vouch for is reported as the
// Validation mode says (a warning by default, an error with
// ValidateStrict, nothing with ValidateIgnore), and the agent loads with
// its warnings in Agent.Warnings:
//
//   - a key no schema object has (error_code_mapping on an extraction
//     block, a top-level code_artifact_metadata): the service ignores
//     such keys, so the key is left out of what is sent; a block's
//     parameters, output_parameter and loop_over, which the service only
//     writes in its answers, likewise. A key close to a known one is
//     taken for a typo and is an error with the closest key, as a typo
//     would otherwise drop a value without a word (but with
//     ValidateIgnore);
//   - a block_type abctl does not know (browser_task): the service knows
//     types newer than abctl, so the block is kept and sent as written,
//     its label checked with the others. A type close to a known one is a
//     typo, an error as above;
//   - a {{ reference }} in a block's texts to a name the definition does
//     not define. The names defined are the parameter keys, every block's
//     label (the service registers it as a variable holding the block's
//     output, and for a loop its current_value, current_index and
//     current_item) and <label>_output, the loop variables current_value,
//     current_item and current_index inside a loop, and the built-ins
//     (workflow_run_id, workflow_id, workflow_permanent_id,
//     workflow_title). Only the name a reference starts with is checked:
//     the fields after it depend on run-time values, and a filter the
//     hosted service's Jinja accepts ({{ x | upper }}) is left to it. The
//     Python of a code block is not searched. A reference not closed with
//     }} is an error.
//
// Load takes files, directories (their *.yaml, *.yml and *.json files,
// subdirectories with Recursive; names starting with "." are skipped) and
// "-" for standard input, and reads the files in parallel.
//
// # Normalizing and diffs
//
// Normalize and NormalizeAgent turn a definition from a file and an agent
// fetched from the service into the same canonical YAML when the service
// would store the same thing: request shape, server-side defaults and
// derived values removed, keys in a fixed order. Apply compares these
// bytes to skip unchanged agents (no request, no new version); Diff shows
// a unified diff of them; Render writes a fetched agent as a file that
// loads back to the same canonical form.
package agentfile
