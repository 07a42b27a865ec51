package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.RetryRule;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/meters.md is the list of every meter: this test holds the code to it. The table's rows are
 * {@code | `name` | type | base unit | `tag`, `tag` | module | registered | removed |}.
 */
class MetersTableTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern BUILDER =
      Pattern.compile("\\b(Counter|Gauge|Timer|TimeGauge|DistributionSummary|LongTaskTimer|FunctionCounter|FunctionTimer)"
          + "\\.builder\\(\\s*\"([^\"]+)\"");
  private static final Pattern SHORTCUT = Pattern.compile("\\.(counter|gauge|timer|summary)\\(\\s*\"fairway\\.");

  record Row(String name, String type, String unit, Set<String> tags) {}

  static Map<String, Row> table() throws IOException {
    Map<String, Row> rows = new TreeMap<>();
    for (String line : Files.readAllLines(ROOT.resolve("docs/meters.md"))) {
      if (!line.startsWith("| `fairway.")) {
        continue;
      }
      String[] cells = line.split("\\|");
      String name = cells[1].trim().replace("`", "");
      Set<String> tags = Arrays.stream(cells[4].split(","))
          .map(t -> t.trim().replace("`", "")).filter(t -> !t.isEmpty()).collect(Collectors.toCollection(TreeSet::new));
      Row previous = rows.put(name, new Row(name, cells[2].trim(), cells[3].trim(), tags));
      assertThat(previous).as("one row per name: %s", name).isNull();
    }
    assertThat(rows).as("rows read from docs/meters.md").hasSizeGreaterThan(10);
    return rows;
  }

  private static String typeOf(String builderClass) {
    return switch (builderClass) {
      case "Counter" -> "counter";
      case "Gauge" -> "gauge";
      case "Timer" -> "timer";
      case "TimeGauge" -> "time gauge";
      default -> builderClass;
    };
  }

  /** Every meter the modules' main code builds, by name, with the types it is built as. */
  private static Map<String, Set<String>> builtInCode() throws IOException {
    Map<String, Set<String>> built = new TreeMap<>();
    List<String> shortcuts = new ArrayList<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path module : modules.filter(p -> p.getFileName().toString().startsWith("lb-")).toList()) {
        Path main = module.resolve("src/main/java");
        if (!Files.isDirectory(main)) {
          continue;
        }
        try (Stream<Path> files = Files.walk(main)) {
          for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
            String source = Files.readString(file);
            Matcher m = BUILDER.matcher(source);
            while (m.find()) {
              built.computeIfAbsent(m.group(2), k -> new TreeSet<>()).add(typeOf(m.group(1)));
            }
            if (SHORTCUT.matcher(source).find()) {
              shortcuts.add(ROOT.relativize(file).toString());
            }
          }
        }
      }
    }
    assertThat(shortcuts).as("meters registered without a builder (not checked here)").isEmpty();
    return built;
  }

  @Test
  void everyMeterTheModulesBuild_isInTheTable_withItsType_andEveryRowIsBuilt() throws IOException {
    Map<String, Row> table = table();
    Map<String, Set<String>> built = builtInCode();
    assertThat(built.keySet()).as("meter names in code vs docs/meters.md").isEqualTo(table.keySet());
    for (Map.Entry<String, Set<String>> e : built.entrySet()) {
      assertThat(e.getValue()).as("type of %s", e.getKey()).containsExactly(table.get(e.getKey()).type());
    }
  }

  @Test
  void registeredMeters_matchTheirRows_inTypeUnitAndTagKeys() throws Exception {
    Map<String, Row> table = table();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Target a = Fixtures.t(1).withZone("a");
    Target b = Fixtures.t(2).withZone("b");
    LoadBalancer lb = LoadBalancer.builder("svc").targets(a, b).localZone("a").targetMeterLimit(1)
        .meterRegistry(registry).build();
    lb.pick(null, Set.of(b)).failure(new ConnectException("refused"));
    CallMeters calls = CallMeters.of(lb); // every client integration's call meters
    long start = calls.startNanos();
    calls.attempt(calls.timers(a), CallMeters.Outcome.SUCCESS, start);
    calls.noTarget(start);
    calls.retry(RetryRule.CONNECT_FAILURE);
    calls.budgetExhausted();
    calls.leaked();
    DiscoveryMetrics discovery = DiscoveryMetrics.micrometer(registry, "svc", () -> 1, TimeUnit.SECONDS, () -> 2);
    discovery.error("connect");
    discovery.skipped("bad_port");
    discovery.throttled("unchanged");

    Set<String> seen = new TreeSet<>();
    for (Meter m : registry.getMeters()) {
      String name = m.getId().getName();
      Row row = table.get(name);
      assertThat(row).as("row for %s", name).isNotNull();
      String type = m instanceof TimeGauge ? "time gauge" : m.getId().getType().name().toLowerCase(java.util.Locale.ROOT);
      assertThat(type).as("type of %s", name).isEqualTo(row.type());
      String unit = m.getId().getBaseUnit();
      assertThat(unit == null ? "" : unit).as("base unit of %s", name).isEqualTo(row.unit());
      Set<String> keys = m.getId().getTags().stream().map(Tag::getKey).collect(Collectors.toCollection(TreeSet::new));
      assertThat(keys).as("tag keys of %s", name).isEqualTo(row.tags());
      seen.add(name);
    }
    assertThat(seen).contains("fairway.targets", "fairway.inflight", "fairway.ejections", "fairway.zone.spill",
        "fairway.requests", "fairway.retries", "fairway.retry.budget.exhausted", "fairway.leaked.responses",
        "fairway.discovery.staleness", "fairway.discovery.skipped", "fairway.discovery.throttled");
    lb.close();
    discovery.close();
    assertThat(registry.getMeters()).isEmpty();
  }
}
