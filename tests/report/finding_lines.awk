# The lines of a text report that each show one finding, one per line of output:
# a heading `FILE:L:C: KIND: MESSAGE [ID]`, a note `FILE:L:C: note: KIND: MESSAGE [ID]`
# of a root cause with a heading of its own, and a heading without an id (a finding of
# the static pre-check) unless notes of findings follow it (then it is the heading of
# a root cause, docs/explain.md "Root causes", and its notes are the findings).
function flush() { if (pending != "") print pending; pending = "" }
/^[^ ]+:[0-9]+:[0-9]+: (race|deadlock|exit-violation|lifetime-violation): / {
  flush()
  if ($0 ~ /\[[a-z]+\.[0-9]+\]$/) print; else pending = $0
  next
}
/^[^ ]+:[0-9]+:[0-9]+: note: (race|deadlock|exit-violation|lifetime-violation): / {
  pending = ""
  print
  next
}
/^(== |--devices |[0-9]+ findings?, )/ { flush() }
END { flush() }
