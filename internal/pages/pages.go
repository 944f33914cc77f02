// Package pages cuts the page faults of fresh memory: the first touch of
// each page of memory the process has not used yet.
//
// On a virtual machine every page fault goes through the hypervisor:
// 13-15 µs of CPU each on the one issue 15 was measured on, where the
// first touch of fresh memory was a third of the CPU time of validating
// 5,000 skills. Two hints to Linux avoid most of them: Populate maps a
// buffer's pages in at once, one system call for all of them (0.6 µs a
// page there), and Huge asks for transparent huge pages, one fault for
// 512 pages, where the kernel gives them only to memory that asks (the
// "madvise" mode).
//
// Neither changes a byte of the memory, and neither fails: where the
// kernel cannot take the hint (another system, an older kernel, huge
// pages off or given to all memory anyway), the pages fault in as before.
package pages
