#!/usr/bin/env python3
"""Checks that one `hetc compare` run's CSV, JSON and HTML agree with each
other and with what the plugins offer:

    check_compare_outputs.py HETC MODEL OUT_DIR TARGETS

OUT_DIR holds r.txt (stdout), r.csv, r.json and r.html; TARGETS is the
--targets value. Every task has a row per target; each best template is one
the target offers for the task (as `hetc space` lists them) and the fastest
of those timed; GFLOPS = flops / seconds / 1e9; every available target has a
benchmarked package, and so does the heterogeneous one when two are."""
import csv
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

hetc, model, out, targets_arg = sys.argv[1:5]
targets = targets_arg.split(",")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def close(a, b, tolerance=1e-6):
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-30)


result = json.load(open(f"{out}/r.json"))
rows = list(csv.DictReader(open(f"{out}/r.csv", newline="")))
html = open(f"{out}/r.html", encoding="utf-8").read()
text = open(f"{out}/r.txt").read()

devices = {d["target"]: d for d in result["devices"]}
check([d["target"] for d in result["devices"]] == targets, f"devices {list(devices)} != {targets}")
available = [t for t in targets if devices[t]["status"] == "ok"]
for t in targets:
    d = devices[t]
    if d["status"] == "ok":
        check(d["peak_gflops"] and d["peak_gflops"] > 0 and d["name"], f"{t}: no name or peak")
    else:
        check(d["status"] == "skipped" and d["skipped_reason"], f"{t}: neither ok nor skipped with a reason")
        check(f"{t:<8} skipped: {d['skipped_reason']}" in text, f"{t}: the table does not say why it is skipped")

tasks_output = subprocess.run([hetc, "tasks", model], capture_output=True, text=True, check=True).stdout
task_count = int(re.search(r"(\d+) tasks\n", tasks_output).group(1))
check(len(result["tasks"]) == task_count, f"{len(result['tasks'])} tasks, `hetc tasks` says {task_count}")


def offered_templates(task_index, target):
    space = subprocess.run([hetc, "space", model, "--task", str(task_index), "--target", target],
                           capture_output=True, text=True)
    return re.findall(r"^  template \d+: (\S+) v\d+", space.stdout, re.M)


task_rows = [r for r in rows if r["kind"] == "task"]
package_rows = [r for r in rows if r["kind"] == "package"]
check(len(task_rows) == task_count * len(targets), f"{len(task_rows)} task rows for {task_count} tasks")
ok_entries = 0
for task in result["tasks"]:
    i = task["index"]
    check([e["target"] for e in task["devices"]] == targets, f"task {i}: devices out of order")
    for entry in task["devices"]:
        t = entry["target"]
        row = [r for r in task_rows if r["task"] == str(i) and r["device"] == t]
        check(len(row) == 1, f"task {i} on {t}: {len(row)} CSV rows")
        if not row:
            continue
        row = row[0]
        check(row["status"] == entry["status"], f"task {i} on {t}: CSV and JSON disagree on the status")
        if t not in available:
            check(entry["status"] == "skipped" and row["detail"] == devices[t]["skipped_reason"],
                  f"task {i} on {t}: a skipped target's row lacks its reason")
            continue
        check(entry["status"] == "ok", f"task {i} on {t}: {entry['status']} ({entry['error']})")
        if entry["status"] != "ok":
            continue
        ok_entries += 1
        offered = offered_templates(i, t)
        timed = [x["name"] for x in entry["templates"]]
        check(timed == offered, f"task {i} on {t}: timed {timed}, the target offers {offered}")
        check(entry["best_template"] in offered, f"task {i} on {t}: best {entry['best_template']} not offered")
        fastest = min((x for x in entry["templates"] if x["error"] is None), key=lambda x: x["seconds"])
        check(fastest["name"] == entry["best_template"], f"task {i} on {t}: the best is not the fastest")
        seconds, gflops = float(row["seconds"]), float(row["gflops"])
        check(row["template"] == entry["best_template"], f"task {i} on {t}: CSV and JSON best differ")
        check(close(seconds, entry["seconds"]), f"task {i} on {t}: CSV and JSON seconds differ")
        check(close(gflops, task["flops"] / seconds / 1e9), f"task {i} on {t}: GFLOPS {gflops} != flops/time")
        check(close(float(row["peak_fraction"]), gflops / devices[t]["peak_gflops"]),
              f"task {i} on {t}: fraction of peak is not GFLOPS / peak")
        check(float(row["flops"]) == task["flops"] and int(row["count"]) == task["count"],
              f"task {i}: CSV flops or count differ")
        for x in entry["templates"]:
            if x["error"] is None:
                check(close(x["gflops"], task["flops"] / x["seconds"] / 1e9), f"task {i} on {t} {x['name']}: GFLOPS")

packages = {p["name"]: p for p in result["packages"]}
check([p["name"] for p in result["packages"]] == targets + ["hetero"], f"packages {list(packages)}")
node_total = None
ok_packages = 0
for name, p in packages.items():
    row = [r for r in package_rows if r["device"] == name]
    check(len(row) == 1, f"package {name}: {len(row)} CSV rows")
    if name != "hetero" and name not in available:
        check(p["status"] == "skipped" and p["error"] == devices[name]["skipped_reason"],
              f"package {name}: skipped without its reason")
        continue
    if name == "hetero" and len(available) < 2:
        check(p["status"] == "skipped" and p["error"] == "placement needs two available targets",
              "hetero: not skipped with one target")
        continue
    check(p["status"] == "ok", f"package {name}: {p['status']} ({p['error']})")
    if p["status"] != "ok":
        continue
    ok_packages += 1
    check(0 < p["p50_seconds"] <= p["p90_seconds"] <= p["p99_seconds"], f"package {name}: percentiles out of order")
    check(p["predicted_seconds"] and p["predicted_seconds"] > 0, f"package {name}: no prediction")
    check(row and close(float(row[0]["p50_seconds"]), p["p50_seconds"]), f"package {name}: CSV p50 differs")
    nodes = sum(p["nodes_on_device"].values())
    if node_total is None:
        node_total = nodes
    check(nodes == node_total and nodes > 0, f"package {name}: {nodes} nodes placed, others {node_total}")
    if name != "hetero":
        check(list(p["nodes_on_device"]) == [name], f"package {name}: nodes on {p['nodes_on_device']}")
    else:
        check(set(p["nodes_on_device"]) <= set(available), f"hetero: nodes on {p['nodes_on_device']}")
fused = int(re.search(r"(\d+) nodes after fusion", tasks_output).group(1))
check(node_total == fused, f"packages place {node_total} nodes, `hetc tasks` says {fused} after fusion")
if len(available) > 1:
    check(packages["hetero"]["status"] == "ok", "no heterogeneous package latency")

svgs = re.findall(r"<svg .*?</svg>", html, re.S)
check(len(svgs) == 2, f"{len(svgs)} SVG charts")
bars = 0
for svg in svgs:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    bars += sum(1 for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "bar")
check(bars == ok_entries + ok_packages, f"{bars} bars for {ok_entries} task results and {ok_packages} packages")
check("<script" not in html and "src=" not in html and "href=" not in html, "the HTML fetches or runs something")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"consistent: {task_count} tasks x {len(targets)} targets, {ok_packages} packages, {bars} bars")
