// groupsim's driver for Kafka's TargetAssignmentBuilder (modern/, apache/kafka 1eb7644) with its
// UniformAssignor, run beside groupsim's coordinator.target_assignment by
// `python -m bench target_assignment`. Our own code: it builds the inputs the way Kafka's JMH
// TargetAssignmentBuilderBenchmark.setup() does (members "member<i>" minus one, HOMOGENEOUS or 5
// buckets, an initial target from the UniformAssignor, then "newMember" subscribed to every topic
// added with addOrUpdateMember), except that topic ids come from stdin (deterministic, the same as
// groupsim's) instead of Uuid.randomUuid(). It times build() after a warm-up (process CPU time, all
// JVM threads; the median of five batches) and prints one JSON line per case with an order-free CRC32 digest of the new target
// assignment and the number of records.
//
// stdin, per case:
//   case <label> <HOMOGENEOUS|HETEROGENEOUS> <minIters> <seconds>
//   topics <n>       then n lines: <uuid> <name> <numPartitions>
//   members <m>      then m lines: <memberId> <k> <topicIndex>...
//   end
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.zip.CRC32;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.coordinator.group.modern.TargetAssignmentBuilder;
import org.apache.kafka.coordinator.group.modern.TopicIds;
import org.apache.kafka.coordinator.group.modern.TopicMetadata;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.TopicsImage;

public class TargetAssignmentBench {
    static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static long cpu() { return OS.getProcessCpuTime(); }

    static final int BATCHES = 5;

    // Order-free: members sorted, topics sorted by id, partitions ascending.
    static String digest(Map<String, MemberAssignment> target) {
        CRC32 crc = new CRC32();
        for (String m : new TreeSet<>(target.keySet())) {
            StringBuilder b = new StringBuilder("m:").append(m).append('\n');
            TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
            for (Map.Entry<Uuid, Set<Integer>> e : target.get(m).partitions().entrySet()) {
                if (!e.getValue().isEmpty()) sorted.put(e.getKey().toString(), new TreeSet<>(e.getValue()));
            }
            for (Map.Entry<String, TreeSet<Integer>> e : sorted.entrySet()) {
                b.append("t:").append(e.getKey()).append(':');
                boolean first = true;
                for (int p : e.getValue()) {
                    if (!first) b.append(',');
                    b.append(p);
                    first = false;
                }
                b.append('\n');
            }
            crc.update(b.toString().getBytes(StandardCharsets.UTF_8));
        }
        return Long.toHexString(crc.getValue());
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("case ")) continue;
            String[] c = line.split(" ");
            String label = c[1];
            SubscriptionType type = SubscriptionType.valueOf(c[2]);
            int minIters = Integer.parseInt(c[3]);
            double seconds = Double.parseDouble(c[4]);
            List<String> names = new ArrayList<>();
            Map<String, TopicMetadata> subscriptionMetadata = new HashMap<>();
            Map<String, ConsumerGroupMember> members = new HashMap<>();
            while (!(line = in.readLine()).equals("end")) {
                String[] f = line.split(" ");
                if (f[0].equals("topics")) {
                    int n = Integer.parseInt(f[1]);
                    for (int i = 0; i < n; i++) {
                        String[] t = in.readLine().split(" ");
                        names.add(t[1]);
                        subscriptionMetadata.put(t[1], new TopicMetadata(Uuid.fromString(t[0]), t[1], Integer.parseInt(t[2])));
                    }
                } else if (f[0].equals("members")) {
                    int n = Integer.parseInt(f[1]);
                    for (int i = 0; i < n; i++) {
                        String[] m = in.readLine().split(" ");
                        int k = Integer.parseInt(m[1]);
                        List<String> topics = new ArrayList<>();
                        for (int j = 0; j < k; j++) topics.add(names.get(Integer.parseInt(m[2 + j])));
                        members.put(m[0], new ConsumerGroupMember.Builder(m[0]).setSubscribedTopicNames(topics).build());
                    }
                }
            }
            // AssignorBenchmarkUtils.createTopicsImage / addTopic: 2 replicas over 4 brokers
            MetadataDelta delta = new MetadataDelta(MetadataImage.EMPTY);
            for (TopicMetadata t : subscriptionMetadata.values()) {
                delta.replay(new TopicRecord().setTopicId(t.id()).setName(t.name()));
                for (int i = 0; i < t.numPartitions(); i++) {
                    delta.replay(new PartitionRecord().setTopicId(t.id()).setPartitionId(i)
                        .setReplicas(Arrays.asList(i % 4, (i + 1) % 4)));
                }
            }
            TopicsImage topicsImage = delta.apply(MetadataProvenance.EMPTY).topics();
            TopicIds.TopicResolver resolver = new TopicIds.CachedTopicResolver(topicsImage);
            Map<Uuid, TopicMetadata> topicMetadata = new HashMap<>((int) (subscriptionMetadata.size() / 0.75f + 1));
            for (TopicMetadata t : subscriptionMetadata.values()) topicMetadata.put(t.id(), t);
            // createGroupSpec, the initial assignment and its inverted map
            Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
            for (Map.Entry<String, ConsumerGroupMember> e : members.entrySet()) {
                ConsumerGroupMember m = e.getValue();
                specs.put(e.getKey(), new MemberSubscriptionAndAssignmentImpl(
                    Optional.ofNullable(m.rackId()), Optional.ofNullable(m.instanceId()),
                    new TopicIds(m.subscribedTopicNames(), resolver), new Assignment(m.assignedPartitions())));
            }
            UniformAssignor assignor = new UniformAssignor();
            GroupAssignment initial = assignor.assign(
                new GroupSpecImpl(specs, type, Collections.emptyMap()),
                new SubscribedTopicDescriberImpl(topicMetadata));
            Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
            for (Map.Entry<String, MemberAssignment> e : initial.members().entrySet()) {
                for (Map.Entry<Uuid, Set<Integer>> t : e.getValue().partitions().entrySet()) {
                    Map<Integer, String> pm = inverted.computeIfAbsent(t.getKey(), k -> new HashMap<>());
                    for (Integer p : t.getValue()) pm.put(p, e.getKey());
                }
            }
            Map<String, Assignment> existing = new HashMap<>(members.size() + 1);
            for (Map.Entry<String, MemberAssignment> e : initial.members().entrySet()) {
                existing.put(e.getKey(), new Assignment(e.getValue().partitions()));
            }
            ConsumerGroupMember newMember = new ConsumerGroupMember.Builder("newMember")
                .setSubscribedTopicNames(names).build();
            TargetAssignmentBuilder<ConsumerGroupMember> builder =
                new TargetAssignmentBuilder<ConsumerGroupMember>("benchmark-group", 0, assignor)
                    .withMembers(members)
                    .withSubscriptionMetadata(subscriptionMetadata)
                    .withSubscriptionType(type)
                    .withTargetAssignment(existing)
                    .withInvertedTargetAssignment(inverted)
                    .withTopicsImage(topicsImage)
                    .addOrUpdateMember(newMember.memberId(), newMember);
            TargetAssignmentBuilder.TargetAssignmentResult result = builder.build();
            long warmEnd = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < warmEnd) result = builder.build();
            // BATCHES batches of seconds / BATCHES each, the median batch's CPU ms per call, as
            // bench/timing.py does on the Python side.
            int calls = 0;
            double[] means = new double[BATCHES];
            for (int b = 0; b < BATCHES; b++) {
                int batchCalls = 0;
                // at least 0.1 s: the process CPU clock ticks in 10 ms steps
                long end = System.nanoTime() + (long) (Math.max(seconds / BATCHES, 0.1) * 1e9);
                long start = cpu();
                while (batchCalls < minIters || (System.nanoTime() < end && batchCalls < 100000)) {
                    result = builder.build();
                    batchCalls++;
                }
                means[b] = (cpu() - start) / 1e6 / batchCalls;
                calls += batchCalls;
            }
            Arrays.sort(means);
            double ms = means[BATCHES / 2];
            System.out.println("{\"label\":\"" + label + "\",\"cpu_ms\":" + ms + ",\"calls\":" + calls
                + ",\"records\":" + result.records().size() + ",\"digest\":\"" + digest(result.targetAssignment()) + "\"}");
            System.out.flush();
        }
    }
}
