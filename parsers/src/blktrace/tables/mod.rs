//! Arrow tables of blktrace data. The big ones are stored lean (raw
//! numbers; the store's views add device names, action letters, RWBS, task
//! names and phase columns in SQL): `blk_events` with `blk_details`,
//! `io_requests`, `io_phases`. The small ones are stored as users see them:
//! `blk_lost_events`, `blk_tasks`, `blk_devices`.

use std::sync::Arc;

use arrow_schema::{DataType, Field, SchemaRef};

mod events;
mod requests;
mod small;

pub use events::{details_schema, events_schema, EventBuilder, Printed};
pub use requests::{phases_schema, requests_schema, PhaseBuilder, RequestBuilder};
pub use small::{devices_batch, devices_schema, lost_schema, tasks_batch, tasks_schema, DeviceRow, LostBuilder};

pub const BLK_EVENTS: &str = "blk_events";
pub const BLK_DETAILS: &str = "blk_details";
pub const IO_REQUESTS: &str = "io_requests";
pub const IO_PHASES: &str = "io_phases";
pub const BLK_LOST: &str = "blk_lost_events";
pub const BLK_TASKS: &str = "blk_tasks";
pub const BLK_DEVICES: &str = "blk_devices";

/// `major,minor` as blkparse prints a device.
pub fn dev_name(device: u32) -> String {
    format!("{},{}", device >> 20, device & 0xfffff)
}

fn f(name: &str, t: DataType, nullable: bool) -> Field {
    Field::new(name, t, nullable)
}

/// Every blktrace table, for stores to create even when a table gets no rows.
pub fn side_tables() -> Vec<(&'static str, SchemaRef)> {
    vec![
        (BLK_EVENTS, events_schema()),
        (BLK_DETAILS, details_schema()),
        (IO_REQUESTS, requests_schema()),
        (IO_PHASES, phases_schema()),
        (BLK_LOST, lost_schema()),
        (BLK_TASKS, tasks_schema()),
        (BLK_DEVICES, devices_schema()),
    ]
}

/// Shared by the builders: an Arc'd schema from fields.
fn schema(fields: Vec<Field>) -> SchemaRef {
    Arc::new(arrow_schema::Schema::new(fields))
}
