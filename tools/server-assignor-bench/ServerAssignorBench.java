// groupsim's driver for Kafka's server-side assignors (UniformAssignor, RangeAssignor at 1eb7644),
// run beside the Python ones by `python -m bench server_assignors`. Our own code: it implements
// Kafka's assignor API interfaces the way GroupSpecImpl / MemberSubscriptionAndAssignmentImpl /
// SubscribedTopicDescriberImpl do, builds the inputs of Kafka's ServerSideAssignorBenchmark
// (jmh-benchmarks, same sizes, same FULL/INCREMENTAL set-up) from a case description on stdin,
// times assign() after a warm-up, and prints one JSON line per case with a CRC32 digest of the
// assignment in Java iteration order (so the Python side can check it is exact, order included).
//
// stdin, per case:
//   case <label> <uniform|range> <HOMOGENEOUS|HETEROGENEOUS> <FULL|INCREMENTAL> <minIters> <seconds>
//   topics <n>            then n lines: <uuid> <numPartitions>
//   members <m>           then m lines: <memberId> <rack|-> <k> <topicIndex>...
//   newmember <rack|-> <k> <topicIndex>...      (INCREMENTAL only)
//   end
import java.io.BufferedReader;
import java.lang.management.ManagementFactory;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.CRC32;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

public class ServerAssignorBench {
    static final class Member implements MemberSubscription, MemberAssignment {
        final Optional<String> rack;
        final Set<Uuid> topics;
        final Map<Uuid, Set<Integer>> partitions;

        Member(Optional<String> rack, Set<Uuid> topics, Map<Uuid, Set<Integer>> partitions) {
            this.rack = rack;
            this.topics = topics;
            this.partitions = partitions;
        }

        public Optional<String> rackId() { return rack; }
        public Optional<String> instanceId() { return Optional.empty(); }
        public Set<Uuid> subscribedTopicIds() { return topics; }
        public Map<Uuid, Set<Integer>> partitions() { return partitions; }
    }

    static final class Spec implements GroupSpec {
        final Map<String, Member> members;
        final SubscriptionType type;
        final Map<Uuid, Map<Integer, String>> inverted;

        Spec(Map<String, Member> members, SubscriptionType type, Map<Uuid, Map<Integer, String>> inverted) {
            this.members = members;
            this.type = type;
            this.inverted = inverted;
        }

        public Collection<String> memberIds() { return members.keySet(); }
        public SubscriptionType subscriptionType() { return type; }
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            Map<Integer, String> m = inverted.get(topicId);
            return m != null && m.containsKey(partitionId);
        }
        public MemberSubscription memberSubscription(String memberId) {
            Member m = members.get(memberId);
            if (m == null) throw new IllegalArgumentException("Member Id " + memberId + " not found.");
            return m;
        }
        public MemberAssignment memberAssignment(String memberId) {
            Member m = members.get(memberId);
            return m == null ? new Member(Optional.empty(), Collections.emptySet(), Collections.emptyMap()) : m;
        }
    }

    static final class Describer implements SubscribedTopicDescriber {
        final Map<Uuid, Integer> counts;
        Describer(Map<Uuid, Integer> counts) { this.counts = counts; }
        public int numPartitions(Uuid topicId) { Integer n = counts.get(topicId); return n == null ? -1 : n; }
        public Set<String> racksForPartition(Uuid topicId, int partition) { return Collections.emptySet(); }
    }

    static Set<Uuid> topicsOf(String[] f, int from, List<Uuid> ids) {
        int k = Integer.parseInt(f[from]);
        Set<Uuid> s = new LinkedHashSet<>();
        for (int i = 0; i < k; i++) s.add(ids.get(Integer.parseInt(f[from + 1 + i])));
        return s;
    }

    // Process CPU time (all JVM threads: the benchmark thread, GC and JIT): on a shared machine a
    // wall clock measures the other tenants too.
    static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static long cpu() { return OS.getProcessCpuTime(); }

    static final int BATCHES = 5;
    static final int MAX_CALLS = 100_000;
    static final double MIN_BATCH_SECONDS = 0.1;

    // CPU ms per call: the median over BATCHES batches of the batch's process CPU time divided by
    // its calls; each batch lasts about seconds / BATCHES, at least MIN_BATCH_SECONDS (the process
    // CPU clock ticks in 10 ms steps), and makes at least minIters calls; seconds 0: minIters
    // calls per batch and no clock (the exactness sweep).
    static double medianBatchMs(int minIters, double seconds, Runnable call) {
        double[] means = new double[BATCHES];
        for (int b = 0; b < BATCHES; b++) {
            int calls = 0;
            long cpu0 = cpu();
            double batchSeconds = seconds <= 0 ? 0 : Math.max(seconds / BATCHES, MIN_BATCH_SECONDS);
            long deadline = System.nanoTime() + (long) (batchSeconds * 1e9);
            while (calls < minIters || (System.nanoTime() < deadline && calls < MAX_CALLS)) {
                call.run();
                calls++;
            }
            means[b] = (cpu() - cpu0) / 1e6 / calls;
        }
        java.util.Arrays.sort(means);
        return means[BATCHES / 2];
    }

    static Optional<String> rack(String r) { return r.equals("-") ? Optional.empty() : Optional.of(r); }

    static String digest(GroupAssignment a) {
        CRC32 crc = new CRC32();
        for (String m : new TreeSet<>(a.members().keySet())) {
            StringBuilder b = new StringBuilder("m:").append(m).append('\n');
            for (Map.Entry<Uuid, Set<Integer>> e : a.members().get(m).partitions().entrySet()) {
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
            PartitionAssignor assignor = c[2].equals("range") ? new RangeAssignor() : new UniformAssignor();
            SubscriptionType type = SubscriptionType.valueOf(c[3]);
            boolean incremental = c[4].equals("INCREMENTAL");
            int minIters = Integer.parseInt(c[5]);
            double seconds = Double.parseDouble(c[6]);
            List<Uuid> ids = new ArrayList<>();
            Map<Uuid, Integer> counts = new HashMap<>();
            Map<String, Member> members = new HashMap<>();
            Member newMember = null;
            while (!(line = in.readLine()).equals("end")) {
                String[] f = line.split(" ");
                if (f[0].equals("topics")) {
                    int n = Integer.parseInt(f[1]);
                    for (int i = 0; i < n; i++) {
                        String[] t = in.readLine().split(" ");
                        Uuid id = Uuid.fromString(t[0]);
                        ids.add(id);
                        counts.put(id, Integer.parseInt(t[1]));
                    }
                } else if (f[0].equals("members")) {
                    int n = Integer.parseInt(f[1]);
                    for (int i = 0; i < n; i++) {
                        String[] m = in.readLine().split(" ");
                        members.put(m[0], new Member(rack(m[1]), topicsOf(m, 2, ids), Collections.emptyMap()));
                    }
                } else if (f[0].equals("newmember")) {
                    newMember = new Member(rack(f[1]), topicsOf(f, 2, ids), Collections.emptyMap());
                }
            }
            Describer describer = new Describer(counts);
            Spec spec = new Spec(members, type, Collections.emptyMap());
            if (incremental) {
                // ServerSideAssignorBenchmark.simulateIncrementalRebalance
                GroupAssignment initial = assignor.assign(spec, describer);
                Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
                for (Map.Entry<String, MemberAssignment> e : initial.members().entrySet()) {
                    for (Map.Entry<Uuid, Set<Integer>> t : e.getValue().partitions().entrySet()) {
                        Map<Integer, String> pm = inverted.computeIfAbsent(t.getKey(), k -> new HashMap<>());
                        for (Integer p : t.getValue()) pm.put(p, e.getKey());
                    }
                }
                Map<String, Member> updated = new HashMap<>();
                for (String id : spec.memberIds()) {
                    MemberAssignment ma = initial.members().get(id);
                    Map<Uuid, Set<Integer>> parts = ma == null ? Collections.emptyMap() : ma.partitions();
                    Member old = members.get(id);
                    updated.put(id, new Member(old.rack, old.topics, Collections.unmodifiableMap(parts)));
                }
                updated.put("newMember", newMember);
                spec = new Spec(updated, type, inverted);
            }
            // Warm-up (JIT) for the whole budget, then BATCHES batches of budget / BATCHES each:
            // process CPU time over a batch divided by its calls (the process CPU clock ticks in
            // 10 ms steps, so single calls cannot be timed with it); the median batch is reported,
            // so a batch that met a JIT compilation or a full GC does not decide the number.
            // Also the fastest single call by the wall clock.
            final Spec timedSpec = spec;
            long warmEnd = System.nanoTime() + (long) (seconds * 1e9);
            int warm = 0;
            while (warm < minIters || (System.nanoTime() < warmEnd && warm < MAX_CALLS)) {
                assignor.assign(spec, describer);
                warm++;
            }
            final GroupAssignment[] last = new GroupAssignment[1];
            final double[] wallMin = {Double.MAX_VALUE};
            int[] iters = {0};
            double cpuMedian = medianBatchMs(minIters, seconds, () -> {
                long t0 = System.nanoTime();
                last[0] = assignor.assign(timedSpec, describer);
                wallMin[0] = Math.min(wallMin[0], (System.nanoTime() - t0) / 1e6);
                iters[0]++;
            });
            GroupAssignment result = last[0];
            // assign() and then one read of every partition in iteration order, as the
            // coordinator's TargetAssignmentBuilder does when it writes the records.
            long[] sink = {0};
            double readMedian = medianBatchMs(minIters, seconds, () -> {
                GroupAssignment r = assignor.assign(timedSpec, describer);
                for (MemberAssignment ma : r.members().values())
                    for (Set<Integer> ps : ma.partitions().values())
                        for (int p : ps) sink[0] += p;
            });
            if (sink[0] == -1) System.out.print("");
            System.out.println("{\"label\":\"" + label + "\",\"cpu_ms\":" + cpuMedian + ",\"wall_min_ms\":" + wallMin[0]
                + ",\"read_ms\":" + readMedian + ",\"iters\":" + iters[0] + ",\"warmup\":" + warm + ",\"digest\":\"" + digest(result) + "\"}");
            System.out.flush();
        }
    }
}
