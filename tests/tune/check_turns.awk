# Every measurement's hold in a turns log (HETC_MEASURE_LOG: "measure|build
# LOCK START END PID DEVICE") overlaps no other hold of its lock: no two
# measurements on one device, no build beside a CPU measurement. Prints
# "N measurement holds, M build holds, K overlaps"; fails when K > 0 or
# nothing was measured.
{ kind[NR] = $1; lock[NR] = $2; from[NR] = $3; to[NR] = $4 }
END {
  bad = 0; measured = 0
  for (i = 1; i <= NR; i++) {
    if (kind[i] != "measure") continue
    measured++
    for (j = 1; j <= NR; j++)
      if (j != i && lock[j] == lock[i] && from[j] < to[i] && from[i] < to[j]) bad++
  }
  print measured " measurement holds, " NR - measured " build holds, " bad " overlaps"
  exit bad > 0 || measured == 0
}
