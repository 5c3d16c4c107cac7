/* Memory and block I/O: pages allocated by target processes (counted per
 * process in the pages map) and block requests, timed from issue to
 * completion and sent for targets (counted for the others).
 * Each tracepoint is attached as tp_btf, with a raw_tp twin as the
 * fallback (the collector loads one of the two). Part of bpf/ingero.bpf.c. */

static __always_inline void on_page_alloc(unsigned int order)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct igb_pages *pg, init = {};

	if (!tgid || !is_target(tgid))
		return;
	pg = bpf_map_lookup_elem(&pages, &tgid);
	if (!pg) {
		bpf_map_update_elem(&pages, &tgid, &init, BPF_NOEXIST);
		pg = bpf_map_lookup_elem(&pages, &tgid);
		if (!pg)
			return;
	}
	__sync_fetch_and_add(&pg->bytes, 4096ULL << (order & 31));
	__sync_fetch_and_add(&pg->allocs, 1);
}

static __always_inline void on_rq_issue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct io_start s = {};

	s.ts = bpf_ktime_get_ns();
	s.tgid = bpf_get_current_pid_tgid() >> 32;
	s.bytes = BPF_CORE_READ(rq, __data_len);
	s.op = BPF_CORE_READ(rq, cmd_flags) & 0xff;
	if (bpf_core_field_exists(rq->part))
		s.dev = BPF_CORE_READ(rq, part, bd_dev);
	bpf_map_update_elem(&io_inflight, &key, &s, BPF_ANY);
}

static __always_inline void on_rq_complete(struct request *rq, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct io_start *s = bpf_map_lookup_elem(&io_inflight, &key);

	if (!s)
		return;
	__u64 dur = now - s->ts;
	__u32 tgid = s->tgid, bytes = s->bytes ? s->bytes : nr_bytes, op = s->op, dev = s->dev;
	bpf_map_delete_elem(&io_inflight, &key);
	if (!tgid || !is_target(tgid)) {
		count(IGB_CNT_IO_OTHER, 1);
		count(IGB_CNT_IO_OTHER_NS, dur);
		return;
	}
	struct igb_event *e = reserve();
	if (!e)
		return;
	e->kind = IGB_BLOCK_IO;
	e->ts_ns = now - dur;
	e->dur_ns = dur;
	e->pid = tgid;
	e->arg0 = bytes;
	e->arg1 = dev;
	/* REQ_OP_READ 0, WRITE 1, FLUSH 2, DISCARD 3 -> IG_IO_* */
	e->op = op == 0 ? 1 : op == 1 ? 2 : op == 3 ? 3 : 4;
	e->cpu = bpf_get_smp_processor_id();
	submit(e);
}

TP_PROGS(mm_page_alloc, page_alloc, on_page_alloc(order), struct page *page, unsigned int order)

TP_PROGS(block_rq_issue, rq_issue, on_rq_issue(rq), struct request *rq)

TP_PROGS(block_rq_complete, rq_complete, on_rq_complete(rq, nr_bytes), struct request *rq,
	 int error, unsigned int nr_bytes)
