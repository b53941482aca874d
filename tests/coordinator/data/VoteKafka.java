// Regenerates the "votes" of java_hashmap_orders.json: one vote list per line in votes.txt.
import java.nio.file.*; import java.util.*;
// Mirrors ClassicGroup.selectProtocol's counting: getOrDefault + put, then stream().max(comparingInt).
public class VoteKafka {
  public static void main(String[] a) throws Exception {
    for (String line : Files.readAllLines(Path.of("votes.txt"))) {
      Map<String, Integer> votes = new HashMap<>();
      for (String v : line.split(" ")) { int c = votes.getOrDefault(v, 0); votes.put(v, c + 1); }
      System.out.println(votes.entrySet().stream().max(Comparator.comparingInt(Map.Entry::getValue)).map(Map.Entry::getKey).orElse(null));
    }
  }
}
