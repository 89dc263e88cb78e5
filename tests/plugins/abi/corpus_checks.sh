# Shell functions the older-sample tests share (sourced, not run). They
# read $hetc, $corpus and $work, set by the test before sourcing, which
# starts $work afresh.

rm -rf "$work" && mkdir -p "$work" || exit 1

fail() { echo "FAIL: $*"; exit 1; }

# tasks CASE NODES [KEY...]: CASE has NODES nodes after fusion and each KEY
# (a workload key's tail) among its tasks.
tasks() {
  name=$1 nodes=$2
  shift 2
  "$hetc" tasks "$corpus/$name.onnx" >"$work/$name.tasks" 2>&1 || { cat "$work/$name.tasks"; fail "$name: hetc tasks failed"; }
  head -n 1 "$work/$name.tasks" | grep -q ": $nodes nodes after fusion" ||
    { cat "$work/$name.tasks"; fail "$name: expected $nodes nodes after fusion"; }
  for key in "$@"; do
    grep -q -- "$key f32\$" "$work/$name.tasks" || { cat "$work/$name.tasks"; fail "$name: no task ending in '$key f32'"; }
  done
}

# steps CASE TARGETS: the nodes of CASE's plan on TARGETS (explain's rows,
# kept in $work/CASE.TARGETS.explain).
steps() {
  "$hetc" compile "$corpus/$1.onnx" --targets "$2" -o "$work/$1.$2.hetc" --explain >"$work/$1.$2.explain" 2>&1 ||
    { cat "$work/$1.$2.explain"; fail "$1 on $2: compile failed"; }
  grep -cE '^ +[0-9]+  [a-z_0-9]+ ' "$work/$1.$2.explain"
}
