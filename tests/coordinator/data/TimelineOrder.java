// Regenerates timeline_orders.json: for seeds 1..40, random puts/removes (with snapshots taken
// and deleted as the coordinator runtime does) on Kafka's own TimelineHashMap, printing the ops
// and the keySet() iteration order. Needs Kafka's server-common classes on the classpath, e.g.
// the oracle build's (docs/oracle.md):
//   javac -cp $K/classes TimelineOrder.java
//   for s in $(seq 1 40); do java -cp $K/classes:$(cat $K/runtime-classpath.txt):. TimelineOrder $s; done
import org.apache.kafka.timeline.*;
import org.apache.kafka.common.utils.LogContext;
import java.util.*;
public class TimelineOrder {
  public static void main(String[] a) {
    Random r = new Random(Long.parseLong(a[0]));
    SnapshotRegistry reg = new SnapshotRegistry(new LogContext());
    TimelineHashMap<String,Integer> m = new TimelineHashMap<>(reg, 0);
    StringBuilder ops = new StringBuilder();
    for (int i = 0; i < 60; i++) {
      String k = (r.nextBoolean() ? "g" : "group-") + r.nextInt(40);
      if (r.nextInt(3) == 0) { m.remove(k); ops.append("-").append(k).append(" "); }
      else { m.put(k, i); ops.append("+").append(k).append(" "); }
      if (i % 7 == 0) { reg.idempotentCreateSnapshot(i); reg.deleteSnapshotsUpTo(i); }
    }
    System.out.println(ops.toString().trim());
    System.out.println(String.join(" ", m.keySet()));
  }
}
