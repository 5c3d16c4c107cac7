/* The simulated GPU's memory: fake device addresses, managed and page-locked
 * host memory, the simulated memory limit, synchronous copies. Part of
 * simgpu (hidden symbols), under the device lock. docs/shim.md. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "simgpu.h"

/* Fake device addresses: above the 47-bit user address space, so they can
 * never alias host memory and fault if a program dereferences one. */
#define DPTR_BASE 0x00c0000000000000ULL
#define DPTR_ALIGN 512ULL
#define HASH_SIZE 1024

enum { MEM_DEVICE, MEM_MANAGED, MEM_HOST };

struct alloc {
	u64 base;
	size_t size; /* rounded size charged to the memory limit */
	int kind;
	struct alloc *next;
};

/* Under sim_lock. */
static u64 next_dptr = DPTR_BASE;
static u64 mem_used;
static struct alloc *allocs[HASH_SIZE];
static struct alloc *host_allocs; /* managed and page-locked host memory */

static inline unsigned int dptr_hash(u64 p)
{
	return (unsigned int)((p >> 9) ^ (p >> 21)) & (HASH_SIZE - 1);
}

int sim_is_fake(u64 p)
{
	return p >= DPTR_BASE && p < DPTR_BASE + (1ULL << 52);
}

/* Fake addresses only need to be in the range handed out so far; managed
 * and page-locked ones must be inside one live allocation, because they are
 * real host memory. Lock held. */
static int dptr_ok_locked(u64 p, size_t n)
{
	if (sim_is_fake(p))
		return p < next_dptr && n <= next_dptr - p;
	for (struct alloc *a = host_allocs; a; a = a->next)
		if (p >= a->base && p - a->base <= a->size && n <= a->size - (p - a->base))
			return 1;
	return 0;
}

int sim_dptr_ok(u64 p, size_t n)
{
	int ok;

	pthread_mutex_lock(&sim_lock);
	ok = dptr_ok_locked(p, n);
	pthread_mutex_unlock(&sim_lock);
	return ok;
}

void *sim_host_bytes(u64 p)
{
	return sim_is_fake(p) ? NULL : (void *)(uintptr_t)p;
}

int sim_copy_sync(void *dst, const void *src, size_t n, int check_dst, int check_src)
{
	u64 end;

	if (n && (!dst || !src))
		return SIM_EINVAL;
	pthread_mutex_lock(&sim_lock);
	if ((check_dst && !dptr_ok_locked((u64)(uintptr_t)dst, n)) ||
	    (check_src && !dptr_ok_locked((u64)(uintptr_t)src, n))) {
		pthread_mutex_unlock(&sim_lock);
		return SIM_EINVAL;
	}
	end = sim_legacy_queue_wait(sim_copy_ns(n));
	pthread_mutex_unlock(&sim_lock);
	sim_wait_until(end);
	if (n && !sim_is_fake((u64)(uintptr_t)dst) && !sim_is_fake((u64)(uintptr_t)src))
		memmove(dst, src, n);
	return SIM_OK;
}

static struct alloc *host_map(size_t size, int kind)
{
	struct alloc *a = calloc(1, sizeof(*a));
	void *host;

	if (!a)
		return NULL;
	/* Anonymous pages cost nothing until touched. */
	host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (host == MAP_FAILED) {
		free(a);
		return NULL;
	}
	a->base = (u64)(uintptr_t)host;
	a->size = size;
	a->kind = kind;
	return a;
}

int sim_alloc(u64 *dptr, size_t bytes, int managed, unsigned int flags, int spin_cost)
{
	struct alloc *a;
	size_t size;

	if (!dptr || !bytes || bytes > (1ULL << 48))
		return SIM_EINVAL;
	if (managed && flags != 0x1 && flags != 0x2)
		return SIM_EINVAL;
	size = (bytes + DPTR_ALIGN - 1) & ~(DPTR_ALIGN - 1);
	/* The allocator's CPU cost, outside the lock: one slow allocation must
	 * not serialise the other threads. */
	sim_spin(spin_cost ? sim_malloc_ns() : sim_launch_ns());
	/* Managed memory is usable from the host, so it must be real. */
	a = managed ? host_map(size, MEM_MANAGED) : calloc(1, sizeof(*a));
	if (!a)
		return SIM_ENOMEM;
	pthread_mutex_lock(&sim_lock);
	if (mem_used + size > sim_cfg.mem_limit) {
		pthread_mutex_unlock(&sim_lock);
		if (managed)
			munmap((void *)(uintptr_t)a->base, size);
		free(a);
		return SIM_ENOMEM;
	}
	mem_used += size;
	a->size = size;
	if (managed) {
		a->next = host_allocs;
		host_allocs = a;
	} else {
		a->kind = MEM_DEVICE;
		a->base = next_dptr;
		next_dptr += size + DPTR_ALIGN; /* a gap catches overruns */
		a->next = allocs[dptr_hash(a->base)];
		allocs[dptr_hash(a->base)] = a;
	}
	*dptr = a->base;
	pthread_mutex_unlock(&sim_lock);
	return SIM_OK;
}

/* Unlinks the allocation at base of one of the kinds in mask. Lock held. */
static struct alloc *unlink_alloc(u64 base, unsigned int mask)
{
	struct alloc **pp = sim_is_fake(base) ? &allocs[dptr_hash(base)] : &host_allocs;

	for (; *pp; pp = &(*pp)->next) {
		struct alloc *a = *pp;

		if (a->base == base && (mask & (1u << a->kind))) {
			*pp = a->next;
			return a;
		}
	}
	return NULL;
}

/* Frees like cudaFree does in real CUDA: an implicit device synchronisation
 * first, then a little CPU work (sync). Stream-ordered frees do neither. */
int sim_free(u64 dptr, int sync)
{
	struct alloc *a;
	u64 end = 0;

	if (!dptr)
		return SIM_EINVAL;
	pthread_mutex_lock(&sim_lock);
	a = unlink_alloc(dptr, (1u << MEM_DEVICE) | (1u << MEM_MANAGED));
	if (a) {
		mem_used -= a->size;
		if (sync)
			end = sim_device_end_wait();
	}
	pthread_mutex_unlock(&sim_lock);
	if (!a)
		return SIM_EINVAL;
	if (sync) {
		sim_wait_until(end);
		sim_spin(sim_cfg.free_ns);
	}
	if (a->kind == MEM_MANAGED)
		munmap((void *)(uintptr_t)a->base, a->size);
	free(a);
	return SIM_OK;
}

int sim_host_alloc(void **p, size_t bytes)
{
	struct alloc *a;

	if (!p || !bytes || bytes > (1ULL << 40))
		return SIM_EINVAL;
	/* Page-locking costs the allocator's time. */
	sim_spin(sim_malloc_ns());
	a = host_map((bytes + DPTR_ALIGN - 1) & ~(DPTR_ALIGN - 1), MEM_HOST);
	if (!a)
		return SIM_ENOMEM;
	pthread_mutex_lock(&sim_lock);
	a->next = host_allocs;
	host_allocs = a;
	pthread_mutex_unlock(&sim_lock);
	*p = (void *)(uintptr_t)a->base;
	return SIM_OK;
}

/* Like cudaFreeHost: an implicit device synchronisation, then the free. */
int sim_host_free(void *p)
{
	struct alloc *a;
	u64 end = 0;

	if (!p)
		return SIM_EINVAL;
	pthread_mutex_lock(&sim_lock);
	a = unlink_alloc((u64)(uintptr_t)p, 1u << MEM_HOST);
	if (a)
		end = sim_device_end_wait();
	pthread_mutex_unlock(&sim_lock);
	if (!a)
		return SIM_EINVAL;
	sim_wait_until(end);
	sim_spin(sim_cfg.free_ns);
	munmap(p, a->size);
	free(a);
	return SIM_OK;
}

