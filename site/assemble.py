#!/usr/bin/env python3
# assemble.py — builds the static site from the compiled app: the single-file page (the app's
# JavaScript with the wasm inside, inlined into shell.html: works from file:// with no network),
# the same page for normal hosting (separate .js/.wasm), and the formulas page (also embedded in both).
# Usage: assemble.py SHELL_HTML DOCS_HTML SINGLE_FILE_JS HOSTED_JS HOSTED_WASM OUT_DIR
import json
import pathlib
import shutil
import sys

shell, docs, single_js, hosted_js, hosted_wasm, out = map(pathlib.Path, sys.argv[1:7])
out.mkdir(parents=True, exist_ok=True)
template = shell.read_text(encoding="utf-8")
# The formulas page inside both pages, as a JSON string the shell shows in a frame (srcdoc): the
# saved single file has no docs.html beside it. Every "<" is escaped (\u003c) so no "</script" or
# "<!--" in the text can end or upset the script element.
docs_marker = "{{MESHFIT_DOCS_SCRIPT}}"
assert template.count(docs_marker) == 1, "shell.html must hold one docs-script marker"
docs_json = json.dumps(docs.read_text(encoding="utf-8")).replace("<", "\\u003c")
template = template.replace(docs_marker, '<script type="application/json" id="docs-source">' + docs_json + "</script>")
marker = "{{MESHFIT_APP_SCRIPT}}"
assert template.count(marker) == 1, "shell.html must hold one app-script marker"
inline = single_js.read_text(encoding="utf-8").replace("</script", "<\\/script")
(out / "meshfit.html").write_text(template.replace(marker, "<script>\n" + inline + "\n</script>"), encoding="utf-8")
(out / "index.html").write_text(template.replace(marker, '<script src="meshfit_app.js"></script>'), encoding="utf-8")
shutil.copyfile(hosted_js, out / "meshfit_app.js")
shutil.copyfile(hosted_wasm, out / "meshfit_app.wasm")
shutil.copyfile(docs, out / "docs.html")
