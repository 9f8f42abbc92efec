// BullMQ end to end against a server on PORT: a Queue with normal, delayed,
// prioritised and retried (backoff) jobs, a Worker, QueueEvents 'completed',
// getJobCounts.  Prints a JSON summary; exits 1 on failure or timeout.
const { Queue, Worker, QueueEvents } = require('bullmq');
const port = parseInt(process.env.PORT || '6379', 10);
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const name = 'e2e' + Date.now();

async function main() {
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection });
  await events.waitUntilReady();
  const completed = new Set();
  events.on('completed', ({ jobId }) => completed.add(jobId));
  const attempts = {};
  const order = [];
  const worker = new Worker(name, async (job) => {
    attempts[job.name] = (attempts[job.name] || 0) + 1;
    order.push(job.name);
    if (job.name === 'retry' && attempts.retry === 1) throw new Error('first attempt fails');
    return { doubled: job.data.n * 2 };
  }, { connection, concurrency: 1 });
  const jobs = [
    await queue.add('normal', { n: 1 }),
    await queue.add('delayed', { n: 2 }, { delay: 300 }),
    await queue.add('prio', { n: 3 }, { priority: 1 }),
    await queue.add('retry', { n: 4 }, { attempts: 3, backoff: { type: 'fixed', delay: 200 } }),
  ];
  const deadline = Date.now() + 20000;
  while (completed.size < jobs.length && Date.now() < deadline) await new Promise(r => setTimeout(r, 50));
  const counts = await queue.getJobCounts('completed', 'failed', 'delayed', 'waiting', 'active', 'prioritized');
  const results = {};
  for (const j of jobs) {
    const job = await queue.getJob(j.id);
    results[j.name] = { returnvalue: job.returnvalue, attemptsMade: job.attemptsMade };
  }
  const summary = { completed: completed.size, counts, results, attempts };
  console.log(JSON.stringify(summary));
  await worker.close();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
  const ok = completed.size === jobs.length && counts.completed === jobs.length && counts.failed === 0 &&
    results.retry.attemptsMade === 2 && results.delayed.returnvalue.doubled === 4;
  process.exit(ok ? 0 : 1);
}
main().catch((e) => { console.error(e); process.exit(1); });
setTimeout(() => { console.error('timeout'); process.exit(1); }, 40000).unref();
