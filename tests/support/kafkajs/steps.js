// KafkaJS's everyday work against a broker, step by step; one JSON line per step on stdout:
// {"step": NAME, "ok": true|false, "detail": ..., "ms": DURATION}. Used by the fake broker's client matrix
// (tests/integration/test_fake_broker_clients.py); every wait is bounded.
//
//   node steps.js '{"brokers": ["127.0.0.1:9092"], "topic": "js", "group": "js-group",
//                   "ssl": {"ca": "/path/ca.pem"}, "sasl": {"mechanism": "scram-sha-256",
//                   "username": "alice", "password": "secret"}}'
"use strict";

const fs = require("fs");
const { Kafka, logLevel, CompressionTypes } = require("kafkajs");

const config = JSON.parse(process.argv[2]);
const WAIT_MS = 20000;
const kafka = new Kafka({
  clientId: "kafkajs-matrix",
  brokers: config.brokers,
  logLevel: logLevel.NOTHING,
  connectionTimeout: 5000,
  requestTimeout: 10000,
  retry: { retries: 5, initialRetryTime: 100 },
  ssl: config.ssl ? { ca: [fs.readFileSync(config.ssl.ca, "utf-8")] } : undefined,
  sasl: config.sasl,
});
const topic = config.topic;
const txnTopic = `${topic}-txn`;
const group = config.group;

function report(step, ok, detail, ms) {
  process.stdout.write(JSON.stringify({ step, ok, detail, ms }) + "\n");
}

async function step(name, fn) {
  const started = Date.now();
  try {
    report(name, true, (await fn()) ?? null, Date.now() - started);
    return true;
  } catch (err) {
    report(name, false, `${err.name}: ${err.message}`, Date.now() - started);
    return false;
  }
}

function within(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Consume `count` values of `topics` in `groupId` from the beginning, then commit and stop.
async function consume(groupId, topics, count, options = {}) {
  // a short fetch wait: disconnecting waits for the fetches under way
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, ...options });
  await consumer.connect();
  const values = [];
  try {
    for (const t of topics) await consumer.subscribe({ topic: t, fromBeginning: true });
    await within(
      new Promise((resolve, reject) => {
        consumer
          .run({
            autoCommit: false,
            eachMessage: async ({ topic: t, partition, message }) => {
              values.push(message.value.toString());
              await consumer.commitOffsets([
                { topic: t, partition, offset: (BigInt(message.offset) + 1n).toString() },
              ]);
              if (values.length >= count) resolve();
            },
          })
          .catch(reject);
      }),
      `consuming ${count} values`,
    );
  } finally {
    await consumer.disconnect();
  }
  return values;
}

async function main() {
  const admin = kafka.admin();
  await step("admin connect", () => admin.connect());
  await step("create topics", async () => {
    const created = await admin.createTopics({
      topics: [
        { topic, numPartitions: 3 },
        { topic: txnTopic, numPartitions: 1 },
      ],
      waitForLeaders: true,
    });
    if (!created) throw new Error("createTopics answered false");
  });
  await step("describe cluster", async () => {
    const cluster = await admin.describeCluster();
    return cluster.brokers.length;
  });
  await step("topic metadata", async () => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    if (topics[0].partitions.length !== 3) throw new Error(`${topics[0].partitions.length} partitions`);
  });

  const producer = kafka.producer();
  await step("produce", async () => {
    await producer.connect();
    const messages = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` }));
    await producer.send({ topic, messages, acks: -1 });
    await producer.send({ topic, messages: [{ value: "gzip" }], compression: CompressionTypes.GZIP });
    await producer.disconnect();
  });
  await step("topic offsets", async () => {
    const offsets = await admin.fetchTopicOffsets(topic);
    const total = offsets.reduce((sum, p) => sum + Number(p.high), 0);
    if (total !== 11) throw new Error(`high watermarks sum to ${total}`);
  });
  await step("consume in a group and commit", async () => {
    const values = await consume(group, [topic], 11);
    return values.sort();
  });
  await step("committed offsets", async () => {
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const total = committed.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
    if (total !== 11) throw new Error(`committed offsets sum to ${total}`);
  });
  await step("list groups", async () => {
    const { groups } = await admin.listGroups();
    return groups.map((g) => g.groupId).sort();
  });
  await step("describe groups", async () => {
    const { groups } = await admin.describeGroups([group]);
    return groups[0].state;
  });

  await step("transactions", async () => {
    const txnProducer = kafka.producer({
      transactionalId: `${group}-tx`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await txnProducer.connect();
    try {
      const aborted = await txnProducer.transaction();
      await aborted.send({ topic: txnTopic, messages: [{ value: "aborted" }] });
      await aborted.abort();
      const committed = await txnProducer.transaction();
      await committed.send({ topic: txnTopic, messages: [{ value: "committed" }] });
      await committed.sendOffsets({
        consumerGroupId: `${group}-tx-offsets`,
        topics: [{ topic: txnTopic, partitions: [{ partition: 0, offset: "1" }] }],
      });
      await committed.commit();
    } finally {
      await txnProducer.disconnect();
    }
  });
  await step("read committed", async () => {
    const values = await consume(`${group}-read`, [txnTopic], 1);
    const [offsets] = await admin.fetchOffsets({ groupId: `${group}-tx-offsets`, topics: [txnTopic] });
    return { values, offset: offsets.partitions[0].offset };
  });
  await step("delete topics", () => admin.deleteTopics({ topics: [txnTopic] }));
  await step("admin disconnect", () => admin.disconnect());
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    report("main", false, `${err.name}: ${err.message}`);
    process.exit(1);
  });
