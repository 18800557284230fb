# scripts/manifest.sh, sourced by benchmark.sh, sweep.sh and scaling.sh: a
# results folder holds one run's files and their list, DIR/.files, whose first
# line names the script that wrote it. A new run
#   - refuses a folder with anything else in it: a file no list names (the
#     user's, another script's), a list another script (or a person) wrote,
#     or DIR/.previous (the results of a run that did not finish; see below);
#   - moves the listed files of the previous run to DIR/.previous, and puts
#     them back if this run fails or is interrupted (its own files removed,
#     its child processes stopped); only when it ends well (manifest_end) is
#     the previous run's set removed.
# So a re-run never deletes a good result it does not replace, and never a
# file it did not write.
#   manifest_begin DIR TOOL   (after "die" is defined; sets EXIT/INT/TERM traps)
#   manifest_add NAME         (a file name inside DIR, before it is written)
#   manifest_end              (the run succeeded)
manifest_begin() {
  manifest_dir=$1 manifest_tool=$2
  local list="$manifest_dir/.files" head="# $2 results (scripts/manifest.sh)" f
  [ ! -e "$list" ] || [ "$(head -n 1 -- "$list")" = "$head" ] || die "$list was not written by $2 (another script's, yours, or one from before 2026-11-27): move the folder away or name another"
  if [ -d "$manifest_dir/.previous" ]; then # a run killed without its traps (SIGKILL, a lost node): undo it as its traps would have
    [ ! -e "$manifest_dir/.previous/.files" ] || [ "$(head -n 1 -- "$manifest_dir/.previous/.files")" = "$head" ] ||
      die "$manifest_dir/.previous is not what a killed run of $2 leaves: sort it out by hand"
    manifest_restore
  fi
  local -A named=()
  if [ -e "$list" ]; then
    while IFS= read -r f; do case $f in "" | */* | .* | "#"*) ;; *) named[$f]=1 ;; esac; done < "$list"
  fi
  for f in "$manifest_dir"/* "$manifest_dir"/.[!.]* "$manifest_dir"/..?*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    f=${f##*/}
    [ "$f" = .files ] || [ -n "${named[$f]:-}" ] || die "$manifest_dir holds $f, which no earlier run of $2 wrote there: move it away or name another folder"
  done
  trap manifest_abort EXIT # from here on any exit puts the previous run's files back
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -- "$manifest_dir/.previous" || die "cannot create $manifest_dir/.previous"
  [ ! -e "$list" ] || mv -- "$list" "$manifest_dir/.previous/.files" || die "cannot move $list"
  echo "$head" > "$list" || die "cannot write $list"
  for f in "${!named[@]}"; do [ ! -e "$manifest_dir/$f" ] || mv -- "$manifest_dir/$f" "$manifest_dir/.previous/" || die "cannot move $manifest_dir/$f"; done
}
manifest_add() { echo "$1" >> "$manifest_dir/.files"; }
# A run the script waits for: in the background, so that INT and TERM reach
# the traps at once (bash runs a trap only after a foreground child ends).
manifest_run() {
  "$@" &
  wait $!
}
# On any exit before manifest_end: stop the children, remove this run's
# files, put the previous run's back.
manifest_abort() {
  trap - EXIT INT TERM
  pkill -TERM -P "$BASHPID" 2> /dev/null || true
  wait 2> /dev/null || true
  manifest_restore
}
# This run's listed files removed, the previous run's (in .previous) put back.
manifest_restore() {
  local f
  [ -d "$manifest_dir/.previous" ] || return 0 # nothing was moved yet: nothing of this run to undo
  if [ -f "$manifest_dir/.files" ]; then
    while IFS= read -r f; do case $f in "" | */* | .* | "#"*) ;; *) rm -f -- "$manifest_dir/$f" ;; esac; done < "$manifest_dir/.files"
    rm -f -- "$manifest_dir/.files"
  fi
  for f in "$manifest_dir/.previous"/* "$manifest_dir/.previous"/.[!.]*; do [ -e "$f" ] && mv -- "$f" "$manifest_dir/"; done
  rmdir -- "$manifest_dir/.previous" 2> /dev/null || true
}
manifest_end() {
  trap - EXIT INT TERM
  rm -rf -- "$manifest_dir/.previous"
}
# manifest_claim DIR TOOL NAME..: for a tool whose folder may hold other
# files (gpu-check.sh, gpu-lease.sh: a lent machine's $OUT) and whose results
# stand even when its checks fail: each NAME (a file or folder in DIR) must
# not exist unless an earlier run of TOOL listed it in DIR/.files; then the
# list names them. The tool replaces only its own earlier results, never a
# file it did not write. (No .previous: a partial result is kept.)
manifest_claim() {
  local dir=$1 tool=$2 list="$1/.files" head="# $2 results (scripts/manifest.sh)" n f
  shift 2
  local -A named=()
  if [ -e "$list" ] || [ -L "$list" ]; then
    [ -f "$list" ] && [ "$(head -n 1 -- "$list")" = "$head" ] || die "$list was not written by $tool (another script's, or yours): move it away or name another folder"
    while IFS= read -r f; do named[$f]=1; done < <(tail -n +2 -- "$list")
  fi
  for n in "$@"; do
    { [ ! -e "$dir/$n" ] && [ ! -L "$dir/$n" ]; } || [ -n "${named[$n]:-}" ] || die "$dir holds $n, which no earlier run of $tool wrote: move it away or name another folder"
  done
  { echo "$head"; printf '%s\n' "$@"; } > "$list" || die "cannot write $list"
}
