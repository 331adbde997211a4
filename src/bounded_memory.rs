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
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

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
    let limit = LIMIT.load(Relaxed);
    if held > limit {
        out_of_memory(limit, size);
    }
}

/// Counts `size` bytes fewer held: freed, or never handed out (the allocation failed).
fn release(size: usize) {
    HELD.fetch_sub(size, Relaxed);
}

/// A new block of `size` bytes from `allocate`, counted while it lives (a failed allocation is not).
fn counted(size: usize, allocate: impl FnOnce() -> *mut u8) -> *mut u8 {
    hold(size);
    let ptr = allocate();
    if ptr.is_null() {
        release(size);
    }
    ptr
}

/// Whether a thread is already ending the run: the others wait for the exit rather than print twice.
static EXITING: AtomicBool = AtomicBool::new(false);

/// Ends the run: the limit is lifted first, so the message (and whatever exit runs) may allocate.
#[cold]
fn out_of_memory(limit_in_force: usize, size: usize) -> ! {
    LIMIT.store(usize::MAX, Relaxed);
    if EXITING.swap(true, Relaxed) {
        loop {
            std::thread::park();
        }
    }
    let limit = gpuplan::limits::MEMORY_BYTES;
    // `writeln!` to a locked stderr, its error ignored: `eprintln!` panics when stderr is closed, and a panic must
    // not unwind out of an allocator.
    let _ = writeln!(
        std::io::stderr().lock(),
        "error: gpuplan stopped: one more allocation ({}) would hold more than the {} {} (an input that grows without \
         end: a template that doubles a string in a loop?); bound the input, or {}",
        gpuplan::input::human_bytes(size as u64),
        gpuplan::input::human_bytes(limit_in_force as u64),
        limit.counts,
        limit.how_to_raise()
    );
    std::process::exit(2)
}

// SAFETY: every method forwards to mimalloc with the caller's own arguments; the counting around it touches only
// atomics and never the memory.
unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        counted(layout.size(), || unsafe { mimalloc::MiMalloc.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        counted(layout.size(), || unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        release(layout.size());
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grown = new_size.saturating_sub(layout.size());
        hold(grown);
        // SAFETY: the caller's contract for `realloc`, passed on.
        let new = unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) };
        match (new.is_null(), layout.size().checked_sub(new_size)) {
            // Failed: the old block stays as it was, and so does the count.
            (true, _) => release(grown),
            (false, Some(shrunk)) => release(shrunk),
            (false, None) => {}
        }
        new
    }
}
