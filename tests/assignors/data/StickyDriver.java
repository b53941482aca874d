package org.apache.kafka.clients.consumer;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.*;

/**
 * Reads cases on stdin, one per block:
 *   case <kind sticky|coop|range|roundrobin> [prefer]
 *   topic <name> <count>
 *   member <id> <gen or -> <topics comma list or -> <owned "t:p,t:p" or -> [rack or -] [instance id or -]
 *   end
 * Prints for each case: "result" then "m <id> t-p,t-p,..." lines, "transfer <t-p>=<m>..." or "transfer null", "done".
 * Subscriptions are put into a HashMap in input order (like Kafka's ConsumerCoordinator); the
 * partitions per topic are built as AbstractPartitionAssignor.assign(Cluster, GroupSubscription)
 * builds them (the topics' order is what range's lists follow).
 */
public class StickyDriver {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        String kind = null;
        boolean prefer = false;
        Map<String, List<PartitionInfo>> ppt = new HashMap<>();
        Map<String, Subscription> subs = new HashMap<>();
        List<String> order = new ArrayList<>();
        Node[] none = new Node[]{Node.noNode()};
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            if (f[0].equals("case")) {
                kind = f[1]; ppt = new HashMap<>(); subs = new HashMap<>(); order = new ArrayList<>();
                prefer = f.length > 2 && f[2].equals("prefer");
            } else if (f[0].equals("topic")) {
                int n = Integer.parseInt(f[2]);
                List<PartitionInfo> ps = new ArrayList<>();
                String[] racks = f.length > 3 ? f[3].split(";") : null;
                for (int i = 0; i < n; i++) {
                    Node[] reps = none;
                    if (racks != null) {
                        String[] rs = racks[i].split("[|]");
                        reps = new Node[rs.length];
                        for (int j = 0; j < rs.length; j++) reps[j] = new Node(j, "h", 1, rs[j].equals("-") ? null : rs[j]);
                    }
                    ps.add(new PartitionInfo(f[1], i, reps[0], reps, reps));
                }
                if (n > 0) ppt.put(f[1], ps);
            } else if (f[0].equals("member")) {
                String id = f[1];
                Optional<Integer> gen = f[2].equals("-") ? Optional.empty() : Optional.of(Integer.parseInt(f[2]));
                List<String> topics = f[3].equals("-") ? new ArrayList<>() : new ArrayList<>(Arrays.asList(f[3].split(",")));
                List<TopicPartition> owned = new ArrayList<>();
                if (!f[4].equals("-"))
                    for (String s : f[4].split(",")) {
                        int c = s.lastIndexOf(':');
                        owned.add(new TopicPartition(s.substring(0, c), Integer.parseInt(s.substring(c + 1))));
                    }
                Optional<String> rack = (f.length > 5 && !f[5].equals("-")) ? Optional.of(f[5]) : Optional.empty();
                Subscription sub;
                if (kind.equals("sticky")) {
                    ByteBuffer ud = (owned.isEmpty() && !gen.isPresent()) ? null :
                        StickyAssignor.serializeTopicPartitionAssignment(new AbstractStickyAssignor.MemberData(owned, gen));
                    sub = new Subscription(topics, ud, Collections.emptyList(), gen.orElse(-1), rack);
                } else {
                    sub = new Subscription(topics, null, owned, gen.orElse(-1), rack);
                }
                if (f.length > 6 && !f[6].equals("-")) sub.setGroupInstanceId(Optional.of(f[6]));
                subs.put(id, sub);
                order.add(id);
            } else if (f[0].equals("end")) {
                org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor a =
                    kind.equals("sticky") ? new StickyAssignor()
                    : kind.equals("coop") ? new CooperativeStickyAssignor()
                    : kind.equals("range") ? new RangeAssignor() : new RoundRobinAssignor();
                if (prefer) {
                    java.lang.reflect.Field fl = org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor.class.getDeclaredField("preferRackAwareLogic");
                    fl.setAccessible(true);
                    fl.setBoolean(a, true);
                }
                Map<String, List<TopicPartition>> r;
                try {
                    // the partitions per topic as AbstractPartitionAssignor.assign(Cluster, ...)
                    // builds them: a HashSet of every member's topics (members in the HashMap's
                    // order), then a HashMap filled in that set's order
                    Set<String> all = new HashSet<>();
                    for (Map.Entry<String, Subscription> e : subs.entrySet()) all.addAll(e.getValue().topics());
                    Map<String, List<PartitionInfo>> perTopic = new HashMap<>();
                    for (String t : all) {
                        List<PartitionInfo> ps = ppt.get(t);
                        if (ps != null && !ps.isEmpty()) perTopic.put(t, ps);
                    }
                    r = a.assignPartitions(perTopic, subs);
                } catch (Throwable t) {
                    System.out.println("result");
                    System.out.println("error " + t.getClass().getSimpleName());
                    System.out.println("done");
                    continue;
                }
                System.out.println("result");
                for (String m : order) {
                    StringBuilder sb = new StringBuilder("m " + m + " ");
                    List<TopicPartition> l = r.get(m);
                    for (int i = 0; i < l.size(); i++) { if (i > 0) sb.append(','); sb.append(l.get(i).topic()).append(':').append(l.get(i).partition()); }
                    System.out.println(sb);
                }
                System.out.println("done");
            }
        }
    }
}
