import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Random;

/**
 * Records the iteration order of java.util.HashMap after each step of seeded operation sequences
 * with heavily colliding keys, then of the scripted sequences in the file given as argument (same
 * format without the orders: collections taken from the assignors' cases), for groupsim's model of HashMap (coordinator/java_hashmap.py,
 * tests/coordinator/test_java_hashmap.py). Run by record.sh; the output is committed.
 *
 * Output, one sequence after another:
 *   seq NAME int|uuid INITIAL_CAPACITY      (-1: new HashMap<>())
 *   keys K0 K1 ...                          (ints; uuids as msb:lsb, signed longs)
 *   OP INDEX|I0 I1 ...                      (OP: p = put, c = computeIfAbsent, r = remove,
 *                                            x = clear (INDEX -1); then the key indices in
 *                                            iteration order after the step)
 *   end
 */
public final class HashMapVectors {

    /** Same hashCode, equals and compareTo as org.apache.kafka.common.Uuid. */
    static final class KUuid implements Comparable<KUuid> {
        final long msb;
        final long lsb;

        KUuid(long msb, long lsb) {
            this.msb = msb;
            this.lsb = lsb;
        }

        @Override
        public int hashCode() {
            long xor = msb ^ lsb;
            return (int) (xor >> 32) ^ (int) xor;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof KUuid && ((KUuid) o).msb == msb && ((KUuid) o).lsb == lsb;
        }

        @Override
        public int compareTo(KUuid other) {
            if (msb != other.msb) return msb > other.msb ? 1 : -1;
            if (lsb != other.lsb) return lsb > other.lsb ? 1 : -1;
            return 0;
        }

        @Override
        public String toString() {
            return msb + ":" + lsb;
        }
    }

    static final StringBuilder OUT = new StringBuilder();

    /** One sequence: ops[i] = {kind, key index}. */
    static void run(String name, List<?> keys, int initial, List<int[]> ops) {
        HashMap<Object, Boolean> map = initial < 0 ? new HashMap<>() : new HashMap<>(initial);
        HashMap<Object, Integer> index = new HashMap<>();
        boolean uuid = keys.get(0) instanceof KUuid;
        OUT.append("seq ").append(name).append(uuid ? " uuid " : " int ").append(initial).append('\n');
        OUT.append("keys");
        for (int i = 0; i < keys.size(); i++) {
            OUT.append(' ').append(keys.get(i));
            index.put(keys.get(i), i);
        }
        OUT.append('\n');
        for (int[] op : ops) {
            Object key = op[1] < 0 ? null : keys.get(op[1]);
            switch (op[0]) {
                case 'p': map.put(key, Boolean.TRUE); break;
                case 'c': map.computeIfAbsent(key, k -> Boolean.TRUE); break;
                case 'r': map.remove(key); break;
                default: map.clear();
            }
            OUT.append((char) op[0]).append(' ').append(op[1]).append('|');
            boolean first = true;
            for (Object k : map.keySet()) {
                if (!first) OUT.append(' ');
                first = false;
                OUT.append(index.get(k));
            }
            OUT.append('\n');
        }
        OUT.append("end\n");
    }

    /** offset + k * stride, k = 0 .. n-1: one bucket for every table of <= stride buckets. */
    static List<Integer> stride(int offset, int stride, int n) {
        List<Integer> keys = new ArrayList<>();
        for (int k = 0; k < n; k++) keys.add(offset + k * stride);
        return keys;
    }

    static List<int[]> all(char kind, int n) {
        List<int[]> ops = new ArrayList<>();
        for (int i = 0; i < n; i++) ops.add(new int[] {kind, i});
        return ops;
    }

    static List<int[]> shuffled(char kind, int n, Random random) {
        List<int[]> ops = all(kind, n);
        Collections.shuffle(ops, random);
        return ops;
    }

    /** Random put / computeIfAbsent / remove steps over the keys (removals of present keys). */
    static List<int[]> mixed(int n, int steps, int putWeight, int ciaWeight, int removeWeight, Random random) {
        List<int[]> ops = new ArrayList<>();
        List<Integer> present = new ArrayList<>();
        boolean[] in = new boolean[n];
        int total = putWeight + ciaWeight + removeWeight;
        for (int s = 0; s < steps; s++) {
            int roll = random.nextInt(total);
            if (roll >= putWeight + ciaWeight && !present.isEmpty()) {
                int key = present.remove(random.nextInt(present.size()));
                in[key] = false;
                ops.add(new int[] {'r', key});
            } else {
                int key = random.nextInt(n);
                ops.add(new int[] {roll < putWeight ? 'p' : 'c', key});
                if (!in[key]) {
                    in[key] = true;
                    present.add(key);
                }
            }
        }
        return ops;
    }

    /** Fill with puts, then remove everything in a random order. */
    static List<int[]> fillDrain(char kind, int n, Random random) {
        List<int[]> ops = all(kind, n);
        List<int[]> removals = shuffled('r', n, random);
        ops.addAll(removals);
        return ops;
    }

    /** n Uuids whose hashCode is hashes[k % hashes.length], with random (signed) bits. */
    static List<KUuid> uuids(int[] hashes, int n, Random random) {
        List<KUuid> keys = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            long msb = random.nextLong();
            long high = random.nextInt() & 0xFFFFFFFFL;
            long low = (high ^ (hashes[k % hashes.length] & 0xFFFFFFFFL));
            long xor = (high << 32) | low; // (int) (xor >> 32) ^ (int) xor == the hash
            keys.add(new KUuid(msb, msb ^ xor));
        }
        return keys;
    }

    /** The scripted sequences of a file: seq / keys / "OP INDEX" lines / end. */
    static void runFile(String path) throws IOException {
        String name = null;
        String kind = null;
        int initial = -1;
        List<Object> keys = new ArrayList<>();
        List<int[]> ops = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(path))) {
            String[] f = line.trim().split(" ");
            if (f[0].isEmpty() || f[0].startsWith("#")) continue;
            switch (f[0]) {
                case "seq":
                    name = f[1];
                    kind = f[2];
                    initial = Integer.parseInt(f[3]);
                    keys = new ArrayList<>();
                    ops = new ArrayList<>();
                    break;
                case "keys":
                    for (int i = 1; i < f.length; i++) {
                        if (kind.equals("int")) {
                            keys.add(Integer.parseInt(f[i]));
                        } else {
                            String[] halves = f[i].split(":");
                            keys.add(new KUuid(Long.parseLong(halves[0]), Long.parseLong(halves[1])));
                        }
                    }
                    break;
                case "end":
                    run(name, keys, initial, ops);
                    break;
                default:
                    ops.add(new int[] {f[0].charAt(0), Integer.parseInt(f[1])});
            }
        }
    }

    public static void main(String[] args) throws IOException {
        Random random = new Random(20261127L);
        // Integer keys in one bucket: early resizes below 64 buckets, treeify at 64, putTreeVal,
        // splits at 128 and 256 (re-treeified halves, untreeified ones).
        run("put-stride64", stride(5, 64, 60), -1, all('p', 60));
        run("put-stride128", stride(127, 128, 50), -1, all('p', 50));
        run("put-stride64-shuffled", stride(9, 64, 70), -1, shuffled('p', 70, random));
        run("put-stride32", stride(3, 32, 90), -1, all('p', 90));
        run("cia-stride64", stride(5, 64, 60), -1, all('c', 60));
        run("cia-stride128-shuffled", stride(1, 128, 60), -1, shuffled('c', 60, random));
        run("put-stride64-cap64", stride(17, 64, 40), 64, all('p', 40));
        run("put-stride256-cap128", stride(0, 256, 40), 128, all('p', 40));
        run("cia-stride64-cap64", stride(17, 64, 40), 64, all('c', 40));
        run("put-stride128-cap0", stride(127, 128, 40), 0, all('p', 40));
        run("cia-stride128-cap0", stride(127, 128, 40), 0, all('c', 40));
        run("put-stride128-cap1000", stride(127, 128, 30), 1000, all('p', 30));
        // A tree bin split at 128 buckets into a large half (re-treeified) and a small one
        // (made a list again), both ways round; 40 other keys first grow the table to 64.
        for (int[] halves : new int[][] {{12, 3}, {4, 11}}) {
            List<Integer> keys = stride(6, 1, 40);
            keys.addAll(stride(5, 128, halves[0]));
            keys.addAll(stride(69, 128, halves[1]));
            Collections.shuffle(keys.subList(40, keys.size()), random);
            run("split-" + halves[0] + "-" + halves[1], keys, -1, all('p', keys.size()));
        }
        // Large ints: different hashes after spreading, negative values, one bucket low bits.
        List<Integer> big = new ArrayList<>();
        for (int k = 0; k < 50; k++) big.add(((k * 7919) << 17) ^ 0x2a);
        run("put-high-bits", big, -1, all('p', 50));
        List<Integer> negative = new ArrayList<>();
        for (int k = 0; k < 40; k++) negative.add(-1 - k * 64);
        run("put-negative", negative, -1, all('p', 40));
        // Removal from tree bins (balanceDeletion, untreeify when the tree gets small).
        run("drain-stride64", stride(5, 64, 45), -1, fillDrain('p', 45, random));
        run("drain-stride64-cap64", stride(33, 64, 30), 64, fillDrain('p', 30, random));
        run("drain-cia-stride128", stride(127, 128, 50), 128, fillDrain('c', 50, random));
        // Random mixes over colliding pools.
        List<Integer> pool = new ArrayList<>();
        pool.addAll(stride(7, 64, 30));
        pool.addAll(stride(7 + 4096, 8192, 10));
        pool.addAll(stride(21, 128, 10));
        for (int seed = 0; seed < 6; seed++) {
            run("mixed-int-" + seed, pool, seed % 2 == 0 ? -1 : 64, mixed(pool.size(), 160, 5, 3, 2, random));
        }
        run("mixed-int-cia", pool, -1, mixed(pool.size(), 160, 1, 6, 2, random));
        List<int[]> clearing = all('p', 40);
        clearing.add(new int[] {'x', -1});
        clearing.addAll(shuffled('c', 40, random));
        run("clear-refill", stride(11, 64, 40), -1, clearing);
        // Uuid keys: equal hashCodes (ordered by compareTo), hashes equal in the low bits only.
        run("uuid-equal-hash", uuids(new int[] {0x1234_000f}, 40, random), -1, all('p', 40));
        run("uuid-equal-hash-cia", uuids(new int[] {0x55}, 40, random), -1, all('c', 40));
        run("uuid-two-hashes", uuids(new int[] {0x0001_000f, 0x0003_000f}, 50, random), -1, all('p', 50));
        run("uuid-low-bits", uuids(new int[] {0x7, 0x1007, 0x2007, 0x10007, 0x7fff0007, 0x80000007}, 60, random), -1, all('p', 60));
        run("uuid-drain", uuids(new int[] {0x2f, 0x102f}, 40, random), -1, fillDrain('p', 40, random));
        for (int seed = 0; seed < 4; seed++) {
            List<KUuid> keys = uuids(new int[] {0xf, 0x8f, 0x40f, 0xf00f}, 40, random);
            run("mixed-uuid-" + seed, keys, seed % 2 == 0 ? -1 : 0, mixed(keys.size(), 150, 4, 3, 2, random));
        }
        for (String path : args) runFile(path);
        System.out.print(OUT);
    }
}
