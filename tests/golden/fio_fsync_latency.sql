-- sample: fio-ext4-v7-zstd.dat
-- fsync durations from the syscall events; fio measured 1091 fsyncs, p50 3850 us, max 35815 us.
select count(*) as fsyncs,
       round(quantile_cont(x.ts - e.ts, 0.5) / 1e6, 2) as p50_ms,
       round(max(x.ts - e.ts) / 1e6, 2) as max_ms
from sys_enter_fsync e asof join sys_exit_fsync x on e.pid = x.pid and x.ts >= e.ts
