-- sample: sync-xfs-v6.dat
-- The sync(2) the capture script timed (wall 0.113848 s from date(1) around it).
select e.comm, round((x.ts - e.ts) / 1e9, 4) as sync_seconds
from sys_enter_sync e asof join sys_exit_sync x on e.pid = x.pid and x.ts >= e.ts
