-- sample: lost-events-v7-zstd.dat
select cpu, count(*) as markers, sum(count) as lost, min(next_event_id) as first_after
from lost_events group by cpu order by cpu
