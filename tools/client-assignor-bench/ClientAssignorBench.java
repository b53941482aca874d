/*
 * groupsim's driver (not Kafka's code) that times Kafka's own client assignors (RangeAssignor,
 * RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor from apache/kafka 1eb7644) on
 * the workloads of bench/assignor_workloads.py, in the same run as the Python assignors.
 *
 * Input (stdin): one line per workload, fields separated by tabs:
 *   key, then "topics=" t1:n1,t2:n2,..., then "sets=" set0|set1|... (each a comma list of
 *   topics), then "members=" m1:setIndex,m2:setIndex,..., then "leaving=" m,m,..., then
 *   "assignors=" a,b,... and "rounds=" fresh,owned|leave.
 * Output (stdout): one JSON line per (assignor, round): the fastest timed call, the digest of the
 * first call's assignment and whether the next two calls gave the same, each call on a
 * fresh assignor instance; a warm-up of at least 2 calls and -Dwarm seconds (default 1), then
 * timed calls until at least 3 ran and -Dtimed seconds (default 1) passed (at most 20,000
 * warm-up and 1,000 timed calls), so that the JIT has compiled a millisecond-sized case too. The call timed is
 * AbstractPartitionAssignor.assignPartitions (what Kafka's AbstractStickyAssignorTest times); the calls made and the partitions assigned. A case
 * stops once its calls took -Dbudget seconds (default 20): then the min of the calls that ran.
 * Round "owned"/"leave" (Kafka's second step): members 1..n-1 own their round-1 result with
 * generation 1 (StickyAssignor: in its user data; cooperative: owned partitions), member 0 does
 * not; "leave" drops the leaving members too.
 */
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

public class ClientAssignorBench {
    static final double BUDGET = Double.parseDouble(System.getProperty("budget", "20"));
    static final double WARM = Double.parseDouble(System.getProperty("warm", "1"));
    static final double TIMED = Double.parseDouble(System.getProperty("timed", "1"));
    static final int MAX_WARM_CALLS = 20000;
    static final int MAX_CALLS = 1000;

    static AbstractPartitionAssignor make(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException(name);
        }
    }

    static Map<String, String> fields(String line) {
        Map<String, String> out = new HashMap<>();
        String[] parts = line.split("\t");
        out.put("key", parts[0]);
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            out.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
        }
        return out;
    }

    static List<String> list(String s) {
        return s.isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(s.split(",")));
    }

    // CRC32 of an assignment: members sorted, each "m:<member>" then its partitions in list
    // order as "<topic>-<partition>" lines (bench/assignors.py writes the same).
    static String digest(Map<String, List<TopicPartition>> result) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        for (String m : new java.util.TreeSet<>(result.keySet())) {
            StringBuilder b = new StringBuilder("m:").append(m).append('\n');
            for (TopicPartition tp : result.get(m)) b.append(tp.topic()).append('-').append(tp.partition()).append('\n');
            crc.update(b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return Long.toHexString(crc.getValue());
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            Map<String, String> f = fields(line);
            Map<String, List<PartitionInfo>> partitionsPerTopic = new HashMap<>();
            for (String tc : list(f.get("topics"))) {
                String[] kv = tc.split(":");
                int n = Integer.parseInt(kv[1]);
                List<PartitionInfo> infos = new ArrayList<>(n);
                for (int p = 0; p < n; p++) infos.add(new PartitionInfo(kv[0], p, null, null, null));
                partitionsPerTopic.put(kv[0], infos);
            }
            List<List<String>> sets = new ArrayList<>();
            for (String s : f.get("sets").split("\\|", -1)) sets.add(list(s));
            LinkedHashMap<String, List<String>> members = new LinkedHashMap<>();
            for (String mc : list(f.get("members"))) {
                String[] kv = mc.split(":");
                members.put(kv[0], sets.get(Integer.parseInt(kv[1])));
            }
            Set<String> leaving = new HashSet<>(list(f.get("leaving")));
            for (String name : list(f.get("assignors"))) {
                Map<String, Subscription> fresh = new HashMap<>();
                for (Map.Entry<String, List<String>> e : members.entrySet())
                    fresh.put(e.getKey(), new Subscription(e.getValue()));
                boolean sticky = name.equals("sticky") || name.equals("cooperative-sticky");
                List<String> rounds = sticky ? list(f.get("rounds")) : List.of("fresh");
                Map<String, List<TopicPartition>> first = null;
                for (String round : rounds) {
                    Map<String, Subscription> subs = fresh;
                    if (!round.equals("fresh")) {
                        if (first == null) first = make(name).assignPartitions(partitionsPerTopic, fresh);
                        subs = new HashMap<>();
                        int i = 0;
                        for (Map.Entry<String, List<String>> e : members.entrySet()) {
                            String m = e.getKey();
                            int index = i++;
                            if (round.equals("leave") && leaving.contains(m)) continue;
                            if (index == 0) {
                                subs.put(m, new Subscription(e.getValue()));
                            } else if (name.equals("sticky")) {
                                StickyAssignor a = new StickyAssignor();
                                a.onAssignment(new Assignment(first.get(m)),
                                        new ConsumerGroupMetadata("g", 1, m, Optional.empty()));
                                ByteBuffer userData = a.subscriptionUserData(new HashSet<>(e.getValue()));
                                subs.put(m, new Subscription(e.getValue(), userData));
                            } else {
                                subs.put(m, new Subscription(e.getValue(), null, first.get(m), 1, Optional.empty()));
                            }
                        }
                    }
                    double best = Double.MAX_VALUE;
                    int assigned = 0;
                    String firstDigest = null;
                    boolean stable = true;
                    int calls = 0;
                    int timedCalls = 0;
                    double warm = 0;
                    double timed = 0;
                    // warm-up: at least 2 calls and WARM seconds; then timed calls until at least
                    // 3 ran and TIMED seconds passed (at most MAX_CALLS); the fastest counts. A slow
                    // case stops once its calls took BUDGET seconds: then the min of what ran.
                    while (true) {
                        AbstractPartitionAssignor assignor = make(name);
                        if (subs != fresh) for (Subscription s : subs.values()) if (s.userData() != null) s.userData().rewind();
                        long start = System.nanoTime();
                        Map<String, List<TopicPartition>> result = assignor.assignPartitions(partitionsPerTopic, subs);
                        double took = (System.nanoTime() - start) / 1e9;
                        calls++;
                        boolean warming = calls <= 2 || (warm < WARM && calls <= MAX_WARM_CALLS);
                        if (warming) warm += took; else { timed += took; timedCalls++; }
                        boolean overBudget = warm + timed > BUDGET;
                        if (!warming || overBudget) best = Math.min(best, took);
                        assigned = 0;
                        for (List<TopicPartition> tps : result.values()) assigned += tps.size();
                        // the first call's assignment, and whether every later call gave the same
                        // (Java's HashMap tree bins break ties between equal hashes by identity)
                        if (firstDigest == null || calls <= 3) {
                            String d = digest(result);
                            if (firstDigest == null) firstDigest = d;
                            else stable &= d.equals(firstDigest);
                        }
                        if (overBudget || timedCalls >= MAX_CALLS) break;
                        if (timedCalls >= 3 && timed >= TIMED) break;
                    }
                    System.out.println("{\"workload\":\"" + f.get("key") + "\",\"assignor\":\"" + name
                            + "\",\"round\":\"" + round + "\",\"seconds\":" + best + ",\"calls\":" + calls + ",\"assigned\":" + assigned
                            + ",\"digest\":\"" + firstDigest + "\",\"stable\":" + stable + "}");
                    System.out.flush();
                }
            }
        }
    }
}
