package python

// codeRunner is the Python program that runs a code block's code (see
// Run). Its one argument is JSON: {"memory": bytes of address space,
// "result": the file to write the result to}. It reads {"code", "inputs"}
// from stdin, sets the memory limit first, runs the code with the inputs
// as its global variables, and writes the result file: {"output": the
// names the code bound to JSON values, "skipped": the names it bound to
// other values} or {"error": {"kind": syntax|memory|exception|limits,
// "type", "message", "line", "text"}}. The code's own stdout and stderr
// are left to it.
const codeRunner = `
import json
import sys
import traceback
import types

FILENAME = "<code block>"


def main():
    settings = json.loads(sys.argv[1])
    result_path = settings["result"]

    def finish(value):
        with open(result_path, "w", encoding="utf-8") as f:
            json.dump(value, f, allow_nan=False)

    try:
        import resource
        limit = settings["memory"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except Exception as e:
        finish({"error": {"kind": "limits", "type": type(e).__name__, "message": str(e)}})
        return 1

    payload = json.load(sys.stdin)
    code, inputs = payload["code"], payload["inputs"]
    try:
        compiled = compile(code, FILENAME, "exec")
    except SyntaxError as e:
        finish({"error": {"kind": "syntax", "type": "SyntaxError", "message": e.msg,
                          "line": e.lineno or 0, "text": (e.text or "").strip()}})
        return 1

    names = {"__name__": "__main__", "__builtins__": __builtins__}
    names.update(inputs)
    try:
        exec(compiled, names)
    except MemoryError:
        names = None
        finish({"error": {"kind": "memory", "type": "MemoryError", "message": "out of memory"}})
        return 1
    except SystemExit as e:
        if e.code not in (None, 0):
            finish({"error": {"kind": "exception", "type": "SystemExit",
                              "message": "the code called exit(%r)" % (e.code,), "line": code_line(e)}})
            return 1
    except BaseException as e:
        finish({"error": {"kind": "exception", "type": type(e).__name__,
                          "message": str(e), "line": code_line(e)}})
        return 1

    output, skipped = {}, []
    for name, value in names.items():
        if name.startswith("_") or isinstance(value, (types.ModuleType, types.FunctionType,
                                                      types.BuiltinFunctionType, type)):
            continue
        try:
            unchanged = name in inputs and bool(value == inputs[name])
        except Exception:
            unchanged = False
        if unchanged:
            continue
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            skipped.append(name)
            continue
        output[name] = value
    finish({"output": output, "skipped": sorted(skipped)})
    return 0


def code_line(e):
    """The line of the code block where e was raised, 0 when unknown."""
    line = 0
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno or 0
    return line


sys.exit(main())
`
