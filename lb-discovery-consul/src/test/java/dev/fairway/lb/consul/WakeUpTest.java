package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the watch asks and delivers when, on fake time, against a model of Consul's index: a blocking
 * query on index {@code i} is answered as soon as the model's index passes {@code i}, a fresh read at
 * once. Every query and every delivery is recorded with its (fake) time, in milliseconds from the start.
 */
class WakeUpTest {
  private static final String BASE = "/v1/health/service/orders";
  private static final Pattern INDEX = Pattern.compile("[?&]index=(\\d+)");
  private static final long MS = 1_000_000L;

  private final ScriptedHttp http = new ScriptedHttp();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final long start = scheduler.nanoTime();
  private final List<String> queries = new ArrayList<>(); // "ms path"
  private final List<Long> queryTimes = new ArrayList<>();
  private final List<String> deliveries = new ArrayList<>(); // "ms ids"
  private final List<String> logs = new CopyOnWriteArrayList<>();
  private final Logger jul = Logger.getLogger(ConsulTargetSource.class.getName());
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      logs.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  WakeUpTest() {
    jul.addHandler(capture);
  }

  @AfterEach
  void detach() {
    jul.removeHandler(capture);
  }

  /** Consul as the watch sees it: the index and the body at a time, and when the index next moves. */
  interface Model {
    long index(long atMs);

    String body(long atMs);

    /** The first time after {@code atMs} at which the index moves; Long.MAX_VALUE if never. */
    long nextChange(long atMs);
  }

  private long nowMs() {
    return (scheduler.nanoTime() - start) / MS;
  }

  private ConsulTargetSource source() {
    ConsulTargetSource s = TestSupport.fakeTime(http, scheduler).source("orders").closeness(false)
        .meterRegistry(registry).build();
    s.subscribe(list -> deliveries.add(nowMs() + " " + list.stream().map(Target::id).toList()));
    deliveries.clear(); // the empty list handed over at subscription
    return s;
  }

  /** Runs the watch against {@code model} up to {@code untilMs}: answers queries, runs due steps, moves time. */
  private void run(Model model, long untilMs) {
    while (true) {
      recordQueries();
      ScriptedHttp.Call open = http.count() == 0 ? null : http.last();
      if (open != null && !open.reply().isDone()) {
        Matcher m = INDEX.matcher(open.pathAndQuery());
        long blockOn = m.find() ? Long.parseLong(m.group(1)) : 0;
        long now = nowMs();
        if (blockOn < model.index(now)) {
          http.ok(model.index(now), model.body(now));
          continue;
        }
      }
      long nextStep = scheduler.nextDueNanos();
      long nextChange = model.nextChange(nowMs()) == Long.MAX_VALUE ? Long.MAX_VALUE
          : start + model.nextChange(nowMs()) * MS;
      long until = start + untilMs * MS;
      if (Math.min(nextStep, nextChange) > until) {
        scheduler.advanceTo(until);
        return;
      }
      if (nextStep <= nextChange) {
        scheduler.runNext();
      } else {
        scheduler.advanceTo(nextChange);
      }
    }
  }

  private void recordQueries() {
    while (queries.size() < http.count()) {
      queries.add(nowMs() + " " + http.paths().get(queries.size()).substring(BASE.length()));
      queryTimes.add(nowMs());
    }
  }

  private static String entry(int n) {
    return WatchLoopTest.entry("o" + n, "n" + n, "10.0.0." + n, 80, "passing");
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void rollingDeploy_20ChangesTwoSecondsApart_eachQueriedAndDeliveredAtOnce() {
    // Five instances; at 2 s, 4 s, ... 40 s one step of a rolling deploy: o<k> leaves, o<k+5> joins.
    Model deploy = new Model() {
      @Override
      public long index(long atMs) {
        return 100 + Math.min(20, atMs / 2_000);
      }

      @Override
      public String body(long atMs) {
        int step = (int) Math.min(20, atMs / 2_000);
        List<String> entries = new ArrayList<>();
        for (int n = step + 1; n <= step + 5; n++) {
          entries.add(entry(n));
        }
        return "[" + String.join(",", entries) + "]";
      }

      @Override
      public long nextChange(long atMs) {
        return atMs >= 40_000 ? Long.MAX_VALUE : (atMs / 2_000 + 1) * 2_000;
      }
    };
    source();
    run(deploy, 60_000);

    List<String> expectedQueries = new ArrayList<>(List.of("0 ", "0 ?index=100&wait=5m"));
    List<String> expectedDeliveries = new ArrayList<>(List.of("0 [o1@n1, o2@n2, o3@n3, o4@n4, o5@n5]"));
    for (int k = 1; k <= 20; k++) {
      long at = k * 2_000L;
      expectedQueries.add(at + " ?index=" + (100 + k) + "&wait=5m");
      List<String> ids = new ArrayList<>();
      for (int n = k + 1; n <= k + 5; n++) {
        ids.add("o" + n + "@n" + n);
      }
      ids.sort(null);
      expectedDeliveries.add(at + " " + ids);
    }
    assertThat(deliveries).as("each step delivered when Consul has it (within 1 s: here 0 ms)")
        .containsExactlyElementsOf(expectedDeliveries);
    assertThat(queries).containsExactlyElementsOf(expectedQueries);
    assertThat(scheduler.waitsMillis()).as("no query held back").isEmpty();
    assertThat(registry.find("fairway.discovery.throttled").counters()).isEmpty();
  }

  @Test
  void hotLoop_sameListUnderANewIndexEvery5ms_queriesStayWithinTheBucket() {
    Model hot = new Model() {
      @Override
      public long index(long atMs) {
        return 1 + atMs / 5;
      }

      @Override
      public String body(long atMs) {
        return "[" + entry(1) + "," + entry(2) + "]";
      }

      @Override
      public long nextChange(long atMs) {
        return (atMs / 5 + 1) * 5;
      }
    };
    source();
    run(hot, 60_000);

    // The fresh read and the first blocking query; the burst of 2 same-list wake-ups; then 15 s apart.
    assertThat(queryTimes.subList(0, 4)).containsExactly(0L, 0L, 5L, 10L);
    assertThat(queryTimes).hasSize(7);
    for (int i = 4; i < queryTimes.size(); i++) {
      assertThat(queryTimes.get(i) - queryTimes.get(i - 1)).as("query %d", i).isBetween(14_990L, 15_000L);
    }
    assertThat(queryTimes.size()).as("bound: 2 + burst 2 + one per 15 s")
        .isLessThanOrEqualTo(2 + ConsulTargetSource.DEFAULT_BURST + 60_000 / 15_000);
    assertThat(deliveries).hasSize(1);
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "unchanged").counter().count())
        .isEqualTo(4.0);
  }

  @Test
  void flappingCheck_degradesToPollingEvery5s_logsAndCountsIt_andRecoversOnceQuiet() {
    // o2's check flips every 100 ms until 30 s, through passing, warning and critical (so that every
    // poll 5 s = 50 flips later still finds a change); at 40 s o3 registers.
    Model flapping = new Model() {
      @Override
      public long index(long atMs) {
        return atMs >= 40_000 ? 1_000 : 1 + Math.min(atMs, 30_000) / 100;
      }

      @Override
      public String body(long atMs) {
        if (atMs >= 40_000) {
          return "[" + entry(1) + "," + entry(2) + "," + entry(3) + "]";
        }
        String status = List.of("passing", "warning", "critical").get((int) (index(atMs) % 3));
        // Weights 10/1: passing, warning (weight 1) and critical (unhealthy) are three different targets.
        String o2 = WatchLoopTest.entry("o2", "n2", "10.0.0.2", 80, status)
            .replace("\"Port\":80}", "\"Port\":80,\"Weights\":{\"Passing\":10,\"Warning\":1}}");
        return "[" + entry(1) + "," + o2 + "]";
      }

      @Override
      public long nextChange(long atMs) {
        return atMs < 30_000 ? (atMs / 100 + 1) * 100 : atMs < 40_000 ? 40_000 : Long.MAX_VALUE;
      }
    };
    source();
    run(flapping, 60_000);

    // Immediate while the change bucket (10, refilled one per 500 ms) lasts: the first list at 0, then
    // flips at 100 ms, 200 ms, ...: tokens left after the n-th flip = 9 - n + n/5, none for the 12th.
    List<Long> atOnce = new ArrayList<>();
    for (long t = 0; t <= 1_100; t += 100) {
      atOnce.add(t);
    }
    assertThat(queryTimes.subList(1, 13)).as("blocking queries at once after each change").isEqualTo(atOnce);
    // The 12th flip (1.2 s) finds the bucket empty: polling, one query per 5 s, each answered at once.
    List<Long> polls = queryTimes.subList(13, queryTimes.size() - 1);
    assertThat(polls).containsExactly(6_200L, 11_200L, 16_200L, 21_200L, 26_200L, 31_200L, 36_200L);
    // The 36.2 s poll blocks (quiet since 30 s) until o3 joins at 40 s: delivered at once, polling ends.
    assertThat(queryTimes.get(queryTimes.size() - 1)).isEqualTo(40_000L);
    assertThat(deliveries.get(deliveries.size() - 1)).isEqualTo("40000 [o1@n1, o2@n2, o3@n3]");
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "flapping").counter().count())
        .as("each held poll").isEqualTo(7.0);
    assertThat(logs.stream().filter(l -> l.contains("flapping check")).toList()).hasSize(1)
        .allMatch(l -> l.startsWith("WARNING") && l.contains("polling every 5 s"));
    assertThat(logs).anyMatch(l -> l.startsWith("INFO") && l.contains("quiet again"));
  }
}
