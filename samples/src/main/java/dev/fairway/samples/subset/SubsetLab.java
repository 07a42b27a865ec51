package dev.fairway.samples.subset;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.PeerPosition;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import dev.fairway.lb.TargetStatus;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The subsetting lab (issue 24): C clients over S instances, no sockets, seeded, seconds to run.
 * Each client is a real {@link LoadBalancer} with {@code Subset.of(size, PeerCoordinate.fixed(i,
 * C))} and the strategy inside it; requests are real picks, completed at once. Beside it, in the
 * same run, random subsetting as gRPC's A68 does it (rendezvous hashing: each client keeps the
 * {@code size} instances with the highest hash of its own seed and the instance id), each client a
 * real balancer over its random subset with the same strategy.
 *
 * <p>It prints, per parameter set: connections per instance (max/mean, min/mean, coefficient of
 * variation), requests per instance under uniform and skewed client load, and the client-instance
 * pairs that change when an instance joins (S+1), leaves (S-1), 10% more join (S+10%), a client
 * joins (C+1), and in a rolling restart that gives every instance a new id and address, one at a
 * time. Churn is computed with {@link Subset#shares}, which the lab first checks against every real
 * balancer's own {@link TargetStatus#subsetShare()} (and stops if they ever differ).
 *
 * <p>{@code subset-lab [--set CxSxK]... [--floor N] [--strategy NAME] [--requests-per-target N]
 * [--skew SIGMA] [--seed N] [--restart-steps N]}; {@code --help} says what each does.
 */
public final class SubsetLab {
  private SubsetLab() {}

  /** One parameter set: clients x instances with a window of {@code size}. */
  public record Params(int clients, int instances, int size) {
    @Override
    public String toString() {
      return clients + " x " + instances + " x " + size;
    }
  }

  /** The lab's options; {@link #parse} reads them from the command line. */
  public record Options(List<Params> sets, Integer floor, String strategy, int requestsPerTarget, double skew,
      long seed, int restartSteps) {
    static final List<Params> DEFAULT_SETS =
        List.of(new Params(300, 300, 10), new Params(300, 300, 90), new Params(1000, 5000, 12));

    public static Options defaults() {
      return new Options(DEFAULT_SETS, null, "weighted-round-robin", 50, 1.0, 1L, 1000);
    }

    /** The floor for a set: as given, else the set's own size (so the window is the size asked for). */
    int floorFor(Params p) {
      return floor != null ? floor : p.size();
    }
  }

  static final String HELP = String.join("\n",
      "usage: java -jar fairway-samples.jar subset-lab [options]",
      "  --set CxSxK              clients x instances x window size; repeat for several",
      "                           (default: 300x300x10, 300x300x90, 1000x5000x12)",
      "  --floor N                Subset.withFloor(N) (default: the set's window size, so the window is K)",
      "  --strategy NAME          the strategy inside every client's window (default weighted-round-robin:",
      "                           deterministic, and it honours the window's fractional edge weights)",
      "  --requests-per-target N  uniform load: every client sends N x K requests (default 50)",
      "  --skew SIGMA             skewed load: client i sends N x K x f_i, f_i log-normal(0, SIGMA)",
      "                           normalised to mean 1 (default 1.0)",
      "  --seed N                 seeds the instance removed, the skew and random subsetting (default 1)",
      "  --restart-steps N        rolling restart: measure the first N of the S restarts (default 1000)",
      "  --help                   this text");

  public static void main(String[] args) throws Exception {
    for (String a : args) {
      if (a.equals("--help") || a.equals("-h")) {
        System.out.println(HELP);
        return;
      }
    }
    Options o;
    try {
      o = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.err.println(HELP);
      System.exit(2);
      return;
    }
    // A thousand balancers each log their window once: keep the lab's output to its tables.
    java.util.logging.Logger.getLogger(LoadBalancer.class.getName()).setLevel(java.util.logging.Level.WARNING);
    PrintStream out = System.out;
    out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cpus, load average "
        + String.format(Locale.ROOT, "%.2f", java.lang.management.ManagementFactory.getOperatingSystemMXBean()
            .getSystemLoadAverage()) + " at start");
    for (Params p : o.sets()) {
      Result r = run(p, o);
      out.println(r.table());
      out.flush();
    }
  }

  static Options parse(String[] args) {
    Options d = Options.defaults();
    List<Params> sets = new ArrayList<>();
    Integer floor = null;
    String strategy = d.strategy();
    int perTarget = d.requestsPerTarget();
    double skew = d.skew();
    long seed = d.seed();
    int steps = d.restartSteps();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(a + ": missing value");
      }
      String v = args[++i];
      try {
        switch (a) {
          case "--set" -> {
            String[] parts = v.toLowerCase(Locale.ROOT).split("x");
            if (parts.length != 3) {
              throw new IllegalArgumentException("--set: " + v + " (expected: CxSxK, e.g. 300x300x90)");
            }
            Params p = new Params(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2]));
            if (p.clients() < 1 || p.instances() < 2 || p.size() < 1 || p.size() > p.instances()) {
              throw new IllegalArgumentException("--set: " + v + " (expected: C >= 1, S >= 2, 1 <= K <= S)");
            }
            sets.add(p);
          }
          case "--floor" -> floor = Integer.parseInt(v);
          case "--strategy" -> strategy = Strategy.named(v).name();
          case "--requests-per-target" -> perTarget = Integer.parseInt(v);
          case "--skew" -> skew = Double.parseDouble(v);
          case "--seed" -> seed = Long.parseLong(v);
          case "--restart-steps" -> steps = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("unknown option: " + a);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(a + ": " + v + " (expected: a number)", e);
      }
    }
    if (perTarget < 1 || steps < 0 || skew < 0) {
      throw new IllegalArgumentException("--requests-per-target >= 1, --restart-steps >= 0, --skew >= 0");
    }
    return new Options(sets.isEmpty() ? d.sets() : List.copyOf(sets), floor, strategy, perTarget, skew, seed, steps);
  }

  // ------------------------------------------------------------------ results

  /** max/mean, min/mean and the coefficient of variation of per-instance counts. */
  public record Spread(double maxOverMean, double minOverMean, double cv) {
    static Spread of(long[] counts) {
      double sum = 0;
      long max = Long.MIN_VALUE;
      long min = Long.MAX_VALUE;
      for (long c : counts) {
        sum += c;
        max = Math.max(max, c);
        min = Math.min(min, c);
      }
      double mean = sum / counts.length;
      double var = 0;
      for (long c : counts) {
        var += (c - mean) * (c - mean);
      }
      double sd = Math.sqrt(var / counts.length);
      return new Spread(max / mean, min / mean, sd / mean);
    }
  }

  /** Pairs changed by one event: in total, and the most for one client. */
  public record Churn(long total, double meanPerClient, int maxPerClient) {}

  /** One scheme's numbers for one parameter set. */
  public record SchemeResult(double connectionsPerClient, Spread connections, Spread uniform, Spread skewed,
      Map<String, Churn> churn) {}

  /** Both schemes for one parameter set, and the table as printed. */
  public record Result(Params params, Options options, SchemeResult deterministic, SchemeResult random,
      int restartStepsMeasured, long millis, String table) {}

  static final List<String> EVENTS = List.of("S+1", "S-1", "S+10%", "C+1", "rolling restart");

  // ------------------------------------------------------------------ the run

  /** Runs one parameter set, both schemes. */
  public static Result run(Params p, Options o) throws NoTargetAvailableException {
    long started = System.nanoTime();
    int c = p.clients();
    int s = p.instances();
    Subset shape = Subset.of(p.size(), PeerCoordinate.fixed(0, 1)).withFloor(o.floorFor(p));
    List<Target> list = targets(0, s, 0);
    Random rng = new Random(o.seed());
    long[] clientSeeds = new long[c + 1];
    for (int i = 0; i <= c; i++) {
      clientSeeds[i] = rng.nextLong();
    }
    double[] load = skewedLoad(c, o.skew(), rng);
    int requests = o.requestsPerTarget() * p.size();

    // Deterministic: a real balancer per client; its own view of its window is checked against
    // Subset.shares, which the churn below uses.
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < s; i++) {
      index.put(list.get(i).id(), i);
    }
    long[] detConnections = new long[s];
    long[] detUniform = new long[s];
    long[] detSkewed = new long[s];
    long detPairs = 0;
    for (int i = 0; i < c; i++) {
      Subset subset = Subset.of(p.size(), PeerCoordinate.fixed(i, c)).withFloor(o.floorFor(p));
      try (LoadBalancer lb = balancer(o, list, subset)) {
        Map<Target, Double> expected = shape.shares(list, new PeerPosition(i, c));
        Map<Target, Double> held = new HashMap<>();
        for (TargetStatus st : lb.status()) {
          if (st.subsetShare() > 0) {
            held.put(st.target(), st.subsetShare());
            detConnections[index.get(st.target().id())]++;
            detPairs++;
          }
        }
        if (!held.equals(new HashMap<>(expected))) {
          throw new IllegalStateException("client " + i + ": the balancer holds " + held.keySet()
              + " but Subset.shares says " + expected.keySet());
        }
        pick(lb, requests, index, detUniform);
        pick(lb, (int) Math.round(requests * load[i]), index, detSkewed);
      }
    }

    // Random subsetting (A68): each client keeps the size instances of highest rendezvous score.
    long[] idHashes = idHashes(list);
    long[] rndConnections = new long[s];
    long[] rndUniform = new long[s];
    long[] rndSkewed = new long[s];
    for (int i = 0; i < c; i++) {
      int[] chosen = rendezvous(idHashes, clientSeeds[i], p.size());
      List<Target> mine = new ArrayList<>();
      for (int k : chosen) {
        mine.add(list.get(k));
        rndConnections[k]++;
      }
      try (LoadBalancer lb = balancer(o, mine, null)) {
        pick(lb, requests, index, rndUniform);
        pick(lb, (int) Math.round(requests * load[i]), index, rndSkewed);
      }
    }

    // Churn.
    Map<String, Churn> detChurn = new java.util.LinkedHashMap<>();
    Map<String, Churn> rndChurn = new java.util.LinkedHashMap<>();
    List<Set<String>> detBase = deterministicSets(shape, list, c, c);
    List<Set<String>> rndBase = randomSets(list, clientSeeds, c, p.size());

    List<Target> plusOne = new ArrayList<>(list);
    plusOne.add(target(s, 0));
    compare("S+1", detBase, deterministicSets(shape, plusOne, c, c), rndBase,
        randomSets(plusOne, clientSeeds, c, p.size()), detChurn, rndChurn);

    List<Target> minusOne = new ArrayList<>(list);
    minusOne.remove(new Random(o.seed() + 1).nextInt(s));
    compare("S-1", detBase, deterministicSets(shape, minusOne, c, c), rndBase,
        randomSets(minusOne, clientSeeds, c, p.size()), detChurn, rndChurn);

    List<Target> plusTen = new ArrayList<>(list);
    plusTen.addAll(targets(s, (s + 9) / 10, 0));
    compare("S+10%", detBase, deterministicSets(shape, plusTen, c, c), rndBase,
        randomSets(plusTen, clientSeeds, c, p.size()), detChurn, rndChurn);

    // C+1: the existing clients only (the newcomer's own pairs are new whatever the scheme); random
    // subsetting does not depend on the peer count, so nothing moves there.
    compare("C+1", detBase, deterministicSets(shape, list, c, c + 1), rndBase, rndBase, detChurn, rndChurn);

    int steps = Math.min(s, o.restartSteps());
    rolling(shape, list, clientSeeds, c, p.size(), steps, detChurn, rndChurn);

    long millis = (System.nanoTime() - started) / 1_000_000;
    SchemeResult det = new SchemeResult(detPairs / (double) c, Spread.of(detConnections), Spread.of(detUniform),
        Spread.of(detSkewed), detChurn);
    SchemeResult rnd = new SchemeResult(p.size(), Spread.of(rndConnections), Spread.of(rndUniform),
        Spread.of(rndSkewed), rndChurn);
    return new Result(p, o, det, rnd, steps, millis, table(p, o, det, rnd, steps, millis, requests));
  }

  private static LoadBalancer balancer(Options o, List<Target> list, Subset subset) {
    LoadBalancer.Builder b = LoadBalancer.builder("subset-lab")
        .targets(TargetSource.of(list))
        .strategy(Strategy.named(o.strategy()))
        .passiveHealth(PassiveHealth.disabled());
    if (subset != null) {
      b.subset(subset);
    }
    return b.build();
  }

  private static void pick(LoadBalancer lb, int n, Map<String, Integer> index, long[] counts)
      throws NoTargetAvailableException {
    for (int k = 0; k < n; k++) {
      Pick pick = lb.pick();
      counts[index.get(pick.target().id())]++;
      pick.success();
    }
  }

  /** Per-client load factors, log-normal(0, sigma), normalised to mean 1. */
  static double[] skewedLoad(int clients, double sigma, Random rng) {
    double[] f = new double[clients];
    double sum = 0;
    for (int i = 0; i < clients; i++) {
      f[i] = Math.exp(sigma * rng.nextGaussian());
      sum += f[i];
    }
    for (int i = 0; i < clients; i++) {
      f[i] = f[i] * clients / sum;
    }
    return f;
  }

  /** {@code count} instances from {@code from}, in generation {@code generation} (a new address). */
  static List<Target> targets(int from, int count, int generation) {
    List<Target> out = new ArrayList<>(count);
    for (int i = from; i < from + count; i++) {
      out.add(target(i, generation));
    }
    return out;
  }

  static Target target(int i, int generation) {
    return Target.of("10." + generation + "." + (i / 250) + "." + (i % 250 + 1), 8080);
  }

  // ------------------------------------------------------------------ windows as sets

  static List<Set<String>> deterministicSets(Subset shape, List<Target> list, int clients, int peers) {
    List<Set<String>> out = new ArrayList<>(clients);
    for (int i = 0; i < clients; i++) {
      Set<String> ids = new HashSet<>();
      for (Map.Entry<Target, Double> e : shape.shares(list, new PeerPosition(i, peers)).entrySet()) {
        if (e.getValue() > 0) {
          ids.add(e.getKey().id());
        }
      }
      out.add(ids);
    }
    return out;
  }

  static List<Set<String>> randomSets(List<Target> list, long[] seeds, int clients, int size) {
    long[] hashes = idHashes(list);
    List<Set<String>> out = new ArrayList<>(clients);
    for (int i = 0; i < clients; i++) {
      Set<String> ids = new HashSet<>();
      for (int k : rendezvous(hashes, seeds[i], size)) {
        ids.add(list.get(k).id());
      }
      out.add(ids);
    }
    return out;
  }

  /** The indices of the {@code size} highest rendezvous scores {@code mix(seed, id hash)}. */
  static int[] rendezvous(long[] idHashes, long seed, int size) {
    int n = idHashes.length;
    long[] keyed = new long[n];
    // score's top 44 bits, index in the low 20 (n < 2^20 here); sorted ascending, take the top
    for (int i = 0; i < n; i++) {
      keyed[i] = (score(seed, idHashes[i]) & ~0xFFFFFL) | i;
    }
    Arrays.sort(keyed);
    int[] out = new int[Math.min(size, n)];
    for (int k = 0; k < out.length; k++) {
      out[k] = (int) (keyed[n - 1 - k] & 0xFFFFF);
    }
    return out;
  }

  static long score(long seed, long idHash) {
    return fmix64(seed ^ idHash);
  }

  static long[] idHashes(List<Target> list) {
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = hash64(list.get(i).id());
    }
    return out;
  }

  /** FNV-1a over the chars, then Murmur3's finaliser. */
  static long hash64(String s) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001b3L;
    }
    return fmix64(h);
  }

  static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  // ------------------------------------------------------------------ churn

  static Churn churn(List<Set<String>> before, List<Set<String>> after) {
    long total = 0;
    int max = 0;
    for (int i = 0; i < before.size(); i++) {
      int changed = changed(before.get(i), after.get(i));
      total += changed;
      max = Math.max(max, changed);
    }
    return new Churn(total, total / (double) before.size(), max);
  }

  /** Pairs added plus pairs dropped. */
  static int changed(Set<String> a, Set<String> b) {
    int common = 0;
    for (String x : a) {
      if (b.contains(x)) {
        common++;
      }
    }
    return a.size() - common + b.size() - common;
  }

  private static void compare(String event, List<Set<String>> detBefore, List<Set<String>> detAfter,
      List<Set<String>> rndBefore, List<Set<String>> rndAfter, Map<String, Churn> det, Map<String, Churn> rnd) {
    det.put(event, churn(detBefore, detAfter));
    rnd.put(event, churn(rndBefore, rndAfter));
  }

  /**
   * Restarts the instances one at a time (instance j gets a new id and address); the churn is summed
   * over the steps, the per-client maximum is the most one client changed in one step.
   */
  private static void rolling(Subset shape, List<Target> start, long[] seeds, int clients, int size, int steps,
      Map<String, Churn> det, Map<String, Churn> rnd) {
    List<Target> list = new ArrayList<>(start);
    List<Set<String>> detNow = deterministicSets(shape, list, clients, clients);
    List<Set<String>> rndNow = randomSets(list, seeds, clients, size);
    long detTotal = 0;
    long rndTotal = 0;
    int detMax = 0;
    int rndMax = 0;
    Map<String, Long> idHash = new HashMap<>();
    for (Target t : list) {
      idHash.put(t.id(), hash64(t.id()));
    }
    for (int j = 0; j < steps; j++) {
      String old = list.get(j).id();
      Target fresh = target(j, 1);
      list = new ArrayList<>(list);
      list.set(j, fresh);
      List<Set<String>> detNext = deterministicSets(shape, list, clients, clients);
      Churn d = churn(detNow, detNext);
      detTotal += d.total();
      detMax = Math.max(detMax, d.maxPerClient());
      detNow = detNext;
      // Random subsetting, incrementally: only a client that held the old instance, or whose
      // lowest kept score the new one beats, can change; those are recomputed in full.
      long freshHash = hash64(fresh.id());
      idHash.put(fresh.id(), freshHash);
      long[] hashes = null;
      for (int i = 0; i < clients; i++) {
        Set<String> mine = rndNow.get(i);
        boolean affected = mine.contains(old) || beatsLowest(mine, idHash, seeds[i], freshHash);
        if (!affected) {
          continue;
        }
        if (hashes == null) {
          hashes = idHashes(list);
        }
        Set<String> next = new HashSet<>();
        for (int k : rendezvous(hashes, seeds[i], size)) {
          next.add(list.get(k).id());
        }
        int changed = changed(mine, next);
        rndTotal += changed;
        rndMax = Math.max(rndMax, changed);
        rndNow.set(i, next);
      }
    }
    det.put("rolling restart", new Churn(detTotal, detTotal / (double) clients, detMax));
    rnd.put("rolling restart", new Churn(rndTotal, rndTotal / (double) clients, rndMax));
  }

  private static boolean beatsLowest(Set<String> mine, Map<String, Long> idHash, long seed, long freshHash) {
    long fresh = score(seed, freshHash) & ~0xFFFFFL;
    for (String id : mine) {
      if ((score(seed, idHash.get(id)) & ~0xFFFFFL) < fresh) {
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ the table

  static String table(Params p, Options o, SchemeResult det, SchemeResult rnd, int steps, long millis, int requests) {
    StringBuilder b = new StringBuilder();
    int c = p.clients();
    int s = p.instances();
    b.append(String.format(Locale.ROOT, "subset lab: %d clients x %d instances, window %d (floor %d), strategy %s,"
        + " seed %d, %d requests per client (skewed: log-normal sigma %.1f), %d ms%n", c, s, p.size(),
        o.floorFor(p), o.strategy(), o.seed(), requests, o.skew(), millis));
    String row = "%-44s %16s %16s%n";
    b.append(String.format(Locale.ROOT, row, "", "deterministic", "random (A68)"));
    b.append(String.format(Locale.ROOT, row, "connections per client, mean", f2(det.connectionsPerClient()),
        f2(rnd.connectionsPerClient())));
    spread(b, row, "connections per instance", det.connections(), rnd.connections());
    spread(b, row, "requests per instance, uniform load", det.uniform(), rnd.uniform());
    spread(b, row, "requests per instance, skewed load", det.skewed(), rnd.skewed());
    b.append(String.format(Locale.ROOT, row, "pairs changed (total / per client mean / max)", "", ""));
    for (String e : EVENTS) {
      Churn d = det.churn().get(e);
      Churn r = rnd.churn().get(e);
      String label = "  " + e + (e.equals("rolling restart") ? " (" + steps + " of " + s + " steps)" : "")
          + (e.equals("C+1") ? " (the " + c + " existing clients)" : "");
      b.append(String.format(Locale.ROOT, row, label, churnCell(d), churnCell(r)));
    }
    int cPlusOneBound = 2 * ((s + c - 1) / c) + 2;
    b.append(String.format(Locale.ROOT, "targets: S+1 <= 2 pairs per client: %s (max %d); "
        + "C+1 <= 2 x ceil(S/C) + 2 = %d per client: %s (max %d)%n",
        det.churn().get("S+1").maxPerClient() <= 2 ? "met" : "missed", det.churn().get("S+1").maxPerClient(),
        cPlusOneBound, det.churn().get("C+1").maxPerClient() <= cPlusOneBound ? "met" : "missed",
        det.churn().get("C+1").maxPerClient()));
    return b.toString();
  }

  private static void spread(StringBuilder b, String row, String what, Spread d, Spread r) {
    b.append(String.format(Locale.ROOT, row, what + ": max/mean", f3(d.maxOverMean()), f3(r.maxOverMean())));
    b.append(String.format(Locale.ROOT, row, what + ": min/mean", f3(d.minOverMean()), f3(r.minOverMean())));
    b.append(String.format(Locale.ROOT, row, what + ": CV", f3(d.cv()), f3(r.cv())));
  }

  private static String churnCell(Churn c) {
    return c.total() + " / " + f2(c.meanPerClient()) + " / " + c.maxPerClient();
  }

  private static String f2(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  private static String f3(double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }
}
