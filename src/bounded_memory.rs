//! The process's memory backstop ([`gpuplan::limits::MEMORY_BYTES`]): the allocator counts the bytes the process
//! holds, and the allocation that would pass the limit stops the run with exit 2 and a message naming it. Every
//! input a pull request controls has its own count (`gpuplan::limits`), which stops it first with a located error;
//! this catches growth none of them sees, such as a `--templates` override that doubles a string in a loop (it writes
//! nothing, so the rendered-bytes limit never sees it, and minijinja's fuel counts 30 instructions for a GiB).
//! Without it that run ends as the allocator's abort (exit 134) once the machine is out of memory.
//!
//! The one unsafe code of the binary: a [`GlobalAlloc`] is unsafe to implement. It forwards every call to mimalloc
//! unchanged (see Cargo.toml: faster than glibc's malloc on both cores, same peak memory).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Bounded;

#[global_allocator]
static ALLOCATOR: Bounded = Bounded;

/// Bytes the process holds (the sum of the live allocations' sizes), and the limit in force (none until [`install`]).
static HELD: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Reads the limit (a malformed `GPUPLAN_MAX_MEMORY_BYTES` is an error, as for every limit) and puts it in force.
pub fn install() -> std::io::Result<()> {
    let limit = gpuplan::limits::MEMORY_BYTES.value()?;
    LIMIT.store(usize::try_from(limit).unwrap_or(usize::MAX), Relaxed);
    Ok(())
}

/// Counts `size` more bytes held, stopping the run when that passes the limit.
fn hold(size: usize) {
    let held = HELD.fetch_add(size, Relaxed).saturating_add(size);
    if held > LIMIT.load(Relaxed) {
        out_of_memory(size);
    }
}

/// Ends the run: the limit is lifted first, so the message (and whatever exit runs) may allocate.
#[cold]
fn out_of_memory(size: usize) -> ! {
    LIMIT.store(usize::MAX, Relaxed);
    let limit = gpuplan::limits::MEMORY_BYTES;
    eprintln!(
        "error: gpuplan stopped: one more allocation ({}) would hold more than the {} {} (an input that grows without \
         end: a template that doubles a string in a loop?); bound the input, or {}",
        gpuplan::input::human_bytes(size as u64),
        gpuplan::input::human_bytes(limit.value_or_default()),
        limit.counts,
        limit.how_to_raise()
    );
    std::process::exit(2)
}

// SAFETY: every method forwards to mimalloc with the caller's own arguments; the counting around it touches only
// atomics and never the memory.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        hold(layout.size());
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        hold(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match new_size.checked_sub(layout.size()) {
            Some(grown) => hold(grown),
            None => {
                HELD.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}
