/* Hostile names for the escaping tests (tests/integration/test_hostile_text.sh):
 * renames its main thread and 4 worker threads with prctl(PR_SET_NAME) to
 * names holding ESC, BEL, CR, LF, TAB, a backslash, an invalid UTF-8 byte and
 * a forged "--events" line, and makes its CUDA calls through a function
 * whose ELF symbol holds ESC, BEL, TAB and CR, so that --stacks meets it too.
 * With --plain the names are harmless and the calls the same: the test
 * compares the two runs' counts.
 *
 *   hostile [--plain] [--iters N] [--expect FILE] [--hold FILE]
 *
 * --expect writes the runtime calls it made, "op count" per line, like the
 * workload's. --hold waits after the calls until FILE exists (at most 120 s),
 * so that a tracer can read its mappings and name its stack frames. Nothing
 * it prints holds a hostile byte. */
#include "shim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NTHREADS 4

static const char *const hostile_names[NTHREADS + 1] = {
    "\x1b]0;pwned\x07",	    /* main: sets the terminal's title */
    "a\rb\nc\td",	    /* CR, LF, TAB */
    "\n1 call op=x",	    /* a forged --events line */
    "sp ace\\x1b",	    /* a space and a backslash that looks like an escape */
    "e\x1b[2J\xff\xc2\x9b", /* clear screen, invalid UTF-8, C1 CSI */
};
static const char *const plain_names[NTHREADS + 1] = {
    "hostile-main", "hostile-w1", "hostile-w2", "hostile-w3", "hostile-w4",
};

static int iters = 50, plain;

/* The calls, below the function with the hostile symbol. */
int hostile_calls(int n);
int hostile_calls(int n)
{
	int r = 0;
	for (int i = 0; i < n; i++) {
		void *p = NULL;
		r |= cudaMalloc(&p, 4096);
		r |= cudaLaunchKernel((const void *)hostile_calls, (dim3){1, 1, 1}, (dim3){1, 1, 1},
				      NULL, 0, 0);
		r |= cudaStreamSynchronize(0);
		r |= cudaFree(p);
	}
	asm volatile("" ::: "memory");
	return r;
}

/* A frame-pointer function named with control bytes (the assembler takes
 * any byte but NUL and LF in a quoted symbol), called through a pointer:
 * the compiler would write the name unquoted in a direct call. */
#define HSYM "\"hostile\x1b]0;sym\x07\tX\rY\""
__asm__(".text\n.globl " HSYM "\n.type " HSYM ", @function\n" HSYM ":\n"
	"\tpushq %rbp\n\tmovq %rsp, %rbp\n\tcall hostile_calls\n\tpopq %rbp\n\tret\n"
	".size " HSYM ", .-" HSYM "\n"
	".section .data.rel.ro,\"aw\"\n.balign 8\n.globl hostile_entry\n"
	"hostile_entry: .quad " HSYM "\n.text\n");
extern int (*const hostile_entry)(int);

static void *worker(void *arg)
{
	int k = (int)(long)arg;
	prctl(PR_SET_NAME, (plain ? plain_names : hostile_names)[k]);
	return (void *)(long)hostile_entry(iters);
}

int main(int argc, char **argv)
{
	const char *expect = NULL, *hold = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--plain"))
			plain = 1;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold = argv[++i];
		else {
			fprintf(stderr, "usage: hostile [--plain] [--iters N] [--expect FILE] "
					"[--hold FILE]\n");
			return 2;
		}
	}
	prctl(PR_SET_NAME, (plain ? plain_names : hostile_names)[0]);

	pthread_t t[NTHREADS];
	int r = hostile_entry(iters);
	for (int k = 0; k < NTHREADS; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)(long)(k + 1)))
			return 1;
	for (int k = 0; k < NTHREADS; k++) {
		void *v;
		pthread_join(t[k], &v);
		r |= (int)(long)v;
	}
	int calls = iters * (NTHREADS + 1);
	if (expect) {
		FILE *f = fopen(expect, "w");
		if (!f)
			return 1;
		fprintf(f,
			"cudaMalloc %d\ncudaLaunchKernel %d\ncudaStreamSynchronize %d\n"
			"cudaFree %d\n",
			calls, calls, calls, calls);
		if (fclose(f))
			return 1;
	}
	for (int i = 0; hold && access(hold, F_OK) && i < 12000; i++)
		usleep(10000);
	fprintf(stderr, "hostile: %d threads x %d iterations, %s names, status %d\n", NTHREADS + 1,
		iters, plain ? "plain" : "hostile", r);
	return r != 0;
}
