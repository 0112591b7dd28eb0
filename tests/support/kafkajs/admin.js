// KafkaJS admin calls against a fake cluster (BOOTSTRAP), one JSON line of outcomes; run by
// tests/support/kafkajs.py (run).
const { Kafka, logLevel, ConfigResourceTypes } = require('kafkajs')
const kafka = new Kafka({ clientId: 'kjs', brokers: [process.env.BOOTSTRAP], logLevel: logLevel.NOTHING, retry: { retries: 2 } })
const admin = kafka.admin()
const out = {}
async function step(name, fn) {
  try { out[name] = await fn() } catch (e) { out[name] = { error: e.type || e.name, message: String(e.message).slice(0, 200) } }
}
;(async () => {
  await admin.connect()
  await step('createTopics', () => admin.createTopics({ topics: [{ topic: 'k', numPartitions: 2 }] }))
  const producer = kafka.producer(); await producer.connect()
  await producer.send({ topic: 'k', messages: [0,1,2,3,4,5].map(n => ({ value: String(n), partition: n % 2 })) })
  await producer.disconnect()
  await step('createPartitions', () => admin.createPartitions({ topicPartitions: [{ topic: 'k', count: 3 }] }))
  await step('fetchTopicMetadata', async () => (await admin.fetchTopicMetadata({ topics: ['k'] })).topics[0].partitions.length)
  await step('deleteTopicRecords', () => admin.deleteTopicRecords({ topic: 'k', partitions: [{ partition: 0, offset: '2' }] }))
  await step('fetchTopicOffsets', () => admin.fetchTopicOffsets('k'))
  await step('fetchTopicOffsetsByTimestamp', () => admin.fetchTopicOffsetsByTimestamp('k', Date.now() - 60000))
  await step('describeConfigs', async () => {
    const r = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'k', configNames: ['retention.ms', 'cleanup.policy'] }] })
    return r.resources[0].configEntries.map(e => [e.configName, e.configValue, e.isDefault])
  })
  await step('alterConfigs', () => admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'k', configEntries: [{ name: 'retention.ms', value: '1000' }] }] }))
  await step('describeConfigsAfter', async () => {
    const r = await admin.describeConfigs({ includeSynonyms: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'k', configNames: ['retention.ms'] }] })
    return r.resources[0].configEntries.map(e => [e.configName, e.configValue, e.isDefault, e.configSource])
  })
  await step('setOffsets', () => admin.setOffsets({ groupId: 'kg', topic: 'k', partitions: [{ partition: 1, offset: '2' }] }))
  await step('fetchOffsets', () => admin.fetchOffsets({ groupId: 'kg', topics: ['k'] }))
  await step('listGroups', () => admin.listGroups())
  await step('describeGroups', async () => (await admin.describeGroups(['kg'])).groups.map(g => [g.groupId, g.state]))
  await step('deleteGroups', () => admin.deleteGroups(['kg']))
  await step('describeCluster', async () => (await admin.describeCluster()).brokers.length)
  await step('deleteTopics', () => admin.deleteTopics({ topics: ['k'] }))
  await admin.disconnect()
  console.log(JSON.stringify(out))
})().catch(e => { console.log(JSON.stringify({ fatal: String(e) })); process.exit(1) })
