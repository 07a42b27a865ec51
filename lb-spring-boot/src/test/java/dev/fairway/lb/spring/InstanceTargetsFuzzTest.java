package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

/**
 * Coverage-guided fuzzing (Jazzer) of the starter's mapping from Spring Cloud {@link ServiceInstance}s
 * (whatever a discovery client hands over: ids, hosts, ports and metadata from other machines) to
 * targets. Plain test runs replay the inputs under {@code InstanceTargetsFuzzTestInputs/mapping/};
 * {@code .ci/run} fuzzes for a bounded time with {@code JAZZER_FUZZ=1}.
 *
 * <p>An input is UTF-8 text, one instance a line: {@code instanceId|host|port|key=value;key=value},
 * where {@code ~} stands for null (an id, a host, the whole metadata or one value) and a port that is
 * not a number becomes -1. Readable seeds, and every field reachable by the fuzzer.
 */
class InstanceTargetsFuzzTest {
  private static final ServiceInstance GOOD = new DefaultServiceInstance("fuzz-good", "orders", "10.9.9.9", 8080,
      false, Map.of("weight", "7", "zone", "z1"));

  @FuzzTest(maxDuration = "30s")
  void mapping(byte[] input) {
    List<ServiceInstance> instances = new ArrayList<>();
    instances.add(GOOD);
    for (String line : new String(input, StandardCharsets.UTF_8).split("\n", 64)) {
      if (!line.isEmpty()) {
        instances.add(instance(line));
      }
    }
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    InstanceTargets mapping = new InstanceTargets("orders", registry, () -> 0L);

    MutableTargetSource created = mapping.update(instances); // never throws: bad entries are skipped

    assertThat(created).as("the good instance makes the first list usable").isNotNull();
    List<Target> targets = created.targets();
    Set<String> ids = new HashSet<>();
    for (Target t : targets) {
      assertThat(ids.add(t.id())).as("unique id %s", t.id()).isTrue();
      assertThat(t.port()).isBetween(1, 65_535);
      assertThat(t.weight()).isBetween(1, Target.MAX_WEIGHT);
      assertThat(mapping.instanceOf(t)).isNotNull();
    }
    double rejected = registry.find("fairway.discovery.skipped").counters().stream().mapToDouble(Counter::count)
        .sum();
    assertThat(targets.size() + rejected).as("each instance is a target or counted as rejected")
        .isEqualTo(instances.size());
    // Bad instances around it never cost the good one (it comes first, so a later copy is the duplicate).
    Target good = targets.stream().filter(t -> t.id().equals("fuzz-good")).findFirst()
        .orElseThrow(() -> new AssertionError("the good instance was lost"));
    assertThat(good.host()).isEqualTo("10.9.9.9");
    assertThat(good.weight()).isEqualTo(7);
    assertThat(good.zone()).isEqualTo("z1");
    assertThat(mapping.targetOf(GOOD)).isEqualTo(good);

    // A second list without the good instance: if none of it is usable, the last good list stays
    // (an empty list, though, is taken as it is: every instance left).
    List<ServiceInstance> rest = new ArrayList<>(instances.subList(1, instances.size()));
    List<Target> before = created.targets();
    mapping.update(rest);
    if (!rest.isEmpty() && created.targets().isEmpty()) {
      throw new AssertionError("a list of bad instances emptied the source: " + rest);
    }
    if (rest.isEmpty()) {
      assertThat(created.targets()).isEmpty();
    } else if (targets.size() == 1) {
      assertThat(created.targets()).as("only bad instances: the last good list stays").isEqualTo(before);
    }
  }

  private static ServiceInstance instance(String line) {
    String[] f = line.split("\\|", 4);
    String id = field(f, 0);
    String host = field(f, 1);
    int port;
    try {
      port = Integer.parseInt(f.length > 2 ? f[2].trim() : "");
    } catch (NumberFormatException e) {
      port = -1;
    }
    Map<String, String> metadata = null;
    String meta = field(f, 3);
    if (meta != null) {
      metadata = new HashMap<>();
      for (String pair : meta.split(";")) {
        int eq = pair.indexOf('=');
        if (eq > 0) {
          String value = pair.substring(eq + 1);
          metadata.put(pair.substring(0, eq), value.equals("~") ? null : value);
        }
      }
    }
    return new DefaultServiceInstance(id, "orders", host, port, false, metadata);
  }

  private static String field(String[] f, int i) {
    return i >= f.length || f[i].equals("~") ? null : f[i];
  }
}
