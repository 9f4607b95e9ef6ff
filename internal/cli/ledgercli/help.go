package ledgercli

import "github.com/stateguard/stateguard/internal/cli/version"

// Help and version texts. They reproduce, byte for byte, what the
// reference CLI's argparse prints (fixtures/ledger/cli-transcript.txt),
// extended with the Go CLI's two read commands, get and children, laid out
// the way argparse would lay them out.

// versionText is what --version prints: argparse's "%(prog)s X.Y.Z" shape
// with the binary's version (internal/cli/version).
func versionText() string { return "task-state-guard " + version.String() + "\n" }

const topHelp = `usage: task-state-guard [-h] [--version] --db DB [--allow-external-acl]
                        {init,create,start,heartbeat,close,delivery,reconcile,doctor,get,children,list,backup,prune,history,metrics,restore}
                        ...

Preview and reconcile SQLite task and delivery state after timeouts or
restarts.

positional arguments:
  {init,create,start,heartbeat,close,delivery,reconcile,doctor,get,children,list,backup,prune,history,metrics,restore}
    init                Initialize the database
    create              Create or idempotently reuse a task
    reconcile           Preview or apply stale task and delivery transitions
    doctor              Emit aggregate counts only
    get                 Show one task
    children            List a task's direct children, oldest first
    list                List tasks by state, delivery, time or parent, a page
                        at a time in id order
    backup              Copy the ledger, consistently, to a new file
    prune               Remove finished task trees that ended before a time
    history             Show a task's events, oldest first
    metrics             Print counts for monitoring in Prometheus's text format
    restore             Replace the ledger with a backup, keeping the old one
                        aside

options:
  -h, --help            show this help message and exit
  --version             show program's version number and exit
  --db DB               Path to the local SQLite database
  --allow-external-acl  Acknowledge externally enforced filesystem ACLs on
                        non-POSIX hosts
`

const noArgHelpTemplate = `usage: task-state-guard %s [-h]

options:
  -h, --help  show this help message and exit
`

const taskIDHelpTemplate = `usage: task-state-guard %s [-h] task_id

positional arguments:
  task_id

options:
  -h, --help  show this help message and exit
`

const createHelp = `usage: task-state-guard create [-h] [--task-id TASK_ID]
                               [--parent-id PARENT_ID]
                               [--payload-sha256 PAYLOAD_SHA256]
                               [--timeout-seconds TIMEOUT_SECONDS]
                               [--internal]

options:
  -h, --help            show this help message and exit
  --task-id TASK_ID     Optional caller-generated UUID
  --parent-id PARENT_ID
                        Existing parent task UUID
  --payload-sha256 PAYLOAD_SHA256
                        Opaque lowercase SHA-256 fingerprint
  --timeout-seconds TIMEOUT_SECONDS
  --internal            Mark delivery as owned by a parent or external flow
`

const closeHelp = `usage: task-state-guard close [-h] --status
                              {succeeded,failed,timed_out,cancelled}
                              [--code CODE]
                              task_id

positional arguments:
  task_id

options:
  -h, --help            show this help message and exit
  --status {succeeded,failed,timed_out,cancelled}
  --code CODE
`

const deliveryHelp = `usage: task-state-guard delivery [-h] --status
                                 {delivered,failed,not_applicable}
                                 [--code CODE]
                                 task_id

positional arguments:
  task_id

options:
  -h, --help            show this help message and exit
  --status {delivered,failed,not_applicable}
  --code CODE
`

const reconcileHelp = `usage: task-state-guard reconcile [-h]
                                  [--active-grace-seconds ACTIVE_GRACE_SECONDS]
                                  [--delivery-grace-seconds DELIVERY_GRACE_SECONDS]
                                  [--dry-run]

options:
  -h, --help            show this help message and exit
  --active-grace-seconds ACTIVE_GRACE_SECONDS
  --delivery-grace-seconds DELIVERY_GRACE_SECONDS
  --dry-run             Preview aggregate reconciliation counts without
                        changing the ledger
`

const listHelp = `usage: task-state-guard list [-h]
                             [--status {queued,running,succeeded,failed,timed_out,cancelled}]
                             [--delivery {pending,delivered,failed,not_applicable}]
                             [--updated-before UPDATED_BEFORE]
                             [--ended-before ENDED_BEFORE]
                             [--parent-id PARENT_ID] [--after AFTER]
                             [--limit LIMIT]

options:
  -h, --help            show this help message and exit
  --status {queued,running,succeeded,failed,timed_out,cancelled}
                        Task state (repeatable: any of them)
  --delivery {pending,delivered,failed,not_applicable}
                        Delivery state (repeatable: any of them)
  --updated-before UPDATED_BEFORE
                        Only tasks updated before this Unix time
  --ended-before ENDED_BEFORE
                        Only tasks that ended before this Unix time
  --parent-id PARENT_ID
                        Only direct children of this task
  --after AFTER         Continue after this id (the previous page's next)
  --limit LIMIT         Page size, 1 to 1000 (default 100)
`

const backupHelp = `usage: task-state-guard backup [-h] --to TO

options:
  -h, --help  show this help message and exit
  --to TO     New file for the copy (never overwritten)
`

const restoreHelp = `usage: task-state-guard restore [-h] --from FROM

options:
  -h, --help   show this help message and exit
  --from FROM  Backup to restore (a file backup --to made)
`

const pruneHelp = `usage: task-state-guard prune [-h] --ended-before ENDED_BEFORE [--dry-run]

options:
  -h, --help            show this help message and exit
  --ended-before ENDED_BEFORE
                        Remove only trees whose every task ended before this
                        Unix time
  --dry-run             Count what would be removed without changing the
                        ledger
`

const metricsHelp = `usage: task-state-guard metrics [-h]
                                [--active-grace-seconds ACTIVE_GRACE_SECONDS]
                                [--delivery-grace-seconds DELIVERY_GRACE_SECONDS]
                                [--to TO]

options:
  -h, --help            show this help message and exit
  --active-grace-seconds ACTIVE_GRACE_SECONDS
                        Count running tasks not updated within this many
                        seconds as stuck (default 600, as reconcile)
  --delivery-grace-seconds DELIVERY_GRACE_SECONDS
                        Count pending deliveries of tasks that ended this many
                        seconds ago as overdue (default 600, as reconcile)
  --to TO               Replace this file with the metrics, atomically, for
                        node_exporter's textfile collector
`
