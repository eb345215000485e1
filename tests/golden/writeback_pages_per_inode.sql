-- sample: tracefs-ext4.dat
select name as bdi, ino, count(*) as dirtied_pages, min("index") as first_index, max("index") as last_index
from writeback_dirty_folio group by all order by dirtied_pages desc, ino limit 5
