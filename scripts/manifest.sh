# scripts/manifest.sh, sourced by sweep.sh and scaling.sh: a results folder
# lists the files a run of the script wrote there (.files), and the next run
# removes only those: never a file it did not write. A folder with reports
# that no list names (an older script's, or the user's) is refused.
#   manifest_begin DIR   (after "die" is defined)
#   manifest_add NAME    (a file name inside DIR, before it is written)
manifest_begin() {
  manifest_dir=$1
  local list="$manifest_dir/.files" f
  if [ -f "$list" ]; then
    while IFS= read -r f; do case $f in "" | */* | .*) ;; *) rm -f -- "$manifest_dir/$f" ;; esac; done < "$list"
  elif compgen -G "$manifest_dir/*.r[0-9]*.yaml" > /dev/null || compgen -G "$manifest_dir/*.r[0-9]*.log" > /dev/null; then
    die "$manifest_dir holds reports or logs that no list of this script names (an older run's, or yours): move them away or name another folder"
  fi
  : > "$list" || die "cannot write $list"
}
manifest_add() { echo "$1" >> "$manifest_dir/.files"; }
