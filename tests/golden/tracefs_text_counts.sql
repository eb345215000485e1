-- sample: tracefs-ext4.trace.txt
select event, count(*) as n, count(distinct tgid) as tgids from events group by event order by event
