// Regenerates java_hashmap_orders.json's "java_order" fields: reads one case per line from
// cases.txt (tokens "put<TAB>key" / "remove<TAB>key" separated by spaces, spaces inside keys as
// \u0001) and prints each HashMap's keySet() iteration order, keys separated by \u0002.
// javac HashMapOrder.java && java HashMapOrder > out.txt
import java.nio.file.*;
import java.util.*;

public class HashMapOrder {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Path.of("cases.txt"))) {
            HashMap<String, Integer> map = new HashMap<>();
            for (String token : line.split(" ")) {
                String[] op = token.replace('\u0001', ' ').split("\t");
                if (op[0].equals("put")) map.put(op[1], 1); else map.remove(op[1]);
            }
            System.out.println(String.join("\u0002", map.keySet()));
        }
    }
}
