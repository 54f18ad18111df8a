package main

// exitCodesHelp is the root command's description of the exit statuses.
const exitCodesHelp = `Exit status, the same for every command:
  0        success: nothing wrong was found
  1        the command failed, or found what fails: a rejected entry (plan, parity,
           translate, apply), an unexplained difference (parity), an entry the live clusters
           refuse (plan, apply), an invalid configuration (validate), a failed test
  2        the command line is wrong (unknown command or flag, missing or conflicting flags,
           unknown output format); nothing was done
  128+N    stopped by signal N (130 for SIGINT, 143 for SIGTERM); run exits 0 when a signal
           stops it cleanly`
