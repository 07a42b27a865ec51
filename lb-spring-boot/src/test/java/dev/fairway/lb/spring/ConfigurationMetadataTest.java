package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParserFactory;

/**
 * The configuration metadata the build generates (META-INF/spring-configuration-metadata.json, the
 * processor's output merged with additional-spring-configuration-metadata.json), as an IDE reads
 * it: every fairway key described in plain text, every default the code has, value hints.
 */
class ConfigurationMetadataTest {

  @SuppressWarnings("unchecked")
  private static Map<String, Object> metadata() throws IOException {
    try (InputStream in = ConfigurationMetadataTest.class.getResourceAsStream(
        "/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated metadata on the classpath").isNotNull();
      return JsonParserFactory.getJsonParser().parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, Object>> byName(Map<String, Object> metadata, String section) {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    for (Object item : (List<Object>) metadata.get(section)) {
      Map<String, Object> m = (Map<String, Object>) item;
      out.put((String) m.get("name"), m);
    }
    return out;
  }

  @Test
  void everyFairwayPropertyAndGroup_hasAPlainTextDescription() throws IOException {
    Map<String, Object> metadata = metadata();
    List<String> checked = new ArrayList<>();
    for (String section : List.of("properties", "groups")) {
      byName(metadata, section).forEach((name, item) -> {
        if (!name.startsWith("fairway")) {
          return; // management.endpoint.fairway.*: Boot's own
        }
        checked.add(name);
        Object description = item.get("description");
        assertThat(description).as(name + " has a description").isInstanceOf(String.class);
        assertThat((String) description).as(name).isNotBlank()
            .doesNotContain("{@").doesNotContain("<p>").doesNotContain("<pre>").doesNotContain("</");
      });
    }
    assertThat(checked).contains("fairway.default", "fairway.default.strategy", "fairway.services",
        "fairway.default.hedging.loser-hold", "fairway.default.active-health.path", "fairway.consul",
        "fairway.consul.tls", "fairway.default.subset", "fairway.consul.address", "fairway.kubernetes",
        "fairway.kubernetes.port-name", "fairway.dns", "fairway.dns.refresh", "fairway.dns.services",
        "fairway.httpclient5", "fairway.httpclient5.enabled", "fairway.httpclient5.refresh-interval");
  }

  @Test
  void everySettingWithADefault_saysIt() throws IOException {
    Map<String, Map<String, Object>> properties = byName(metadata(), "properties");
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("fairway.enabled", true);
    expected.put("fairway.default.strategy", "least-queueing");
    expected.put("fairway.default.slow-start", "0s");
    expected.put("fairway.default.panic-threshold", 50);
    expected.put("fairway.default.target-meter-limit", 100);
    expected.put("fairway.default.passive-health.enabled", true);
    expected.put("fairway.default.passive-health.consecutive-failures", 5);
    expected.put("fairway.default.passive-health.max-ejection-percent", 50);
    expected.put("fairway.default.passive-health.ejection-time", "10s");
    expected.put("fairway.default.active-health.interval", "10s");
    expected.put("fairway.default.active-health.timeout", "1s");
    expected.put("fairway.default.concurrency-limit.soft", 8);
    expected.put("fairway.default.concurrency-limit.hard", 16);
    expected.put("fairway.default.failure-status-codes", List.of(500, 502, 503, 504));
    expected.put("fairway.default.hedging", "off");
    expected.put("fairway.default.hedging.loser-hold", "10s");
    expected.put("fairway.default.max-attempts", 3);
    expected.put("fairway.default.retry-budget.percent", 0.2);
    expected.put("fairway.default.retry-budget.min-per-second", 10);
    expected.put("fairway.loadbalancer.enabled", true);
    expected.put("fairway.loadbalancer.abandoned-pick-timeout", "5m");
    expected.put("fairway.okhttp.enabled", false);
    expected.put("fairway.okhttp.refresh-interval", "30s");
    expected.put("fairway.httpclient5.enabled", false);
    expected.put("fairway.httpclient5.refresh-interval", "30s");
    expected.put("fairway.server.load-reports.enabled", false);
    expected.put("fairway.default.subset.floor", 12);
    expected.put("fairway.consul.enabled", false);
    expected.put("fairway.consul.closeness", true);
    expected.put("fairway.consul.first-reply-timeout", "5s");
    expected.put("fairway.consul.passing-only", false);
    expected.put("fairway.consul.zone-metadata-key", "zone");
    expected.put("fairway.kubernetes.enabled", false);
    expected.put("fairway.kubernetes.prefer-ipv6", false);
    expected.put("fairway.kubernetes.first-reply-timeout", "5s");
    expected.put("fairway.dns.enabled", false);
    expected.put("fairway.dns.query-timeout", "5s");
    expected.put("fairway.dns.first-reply-timeout", "5s");
    expected.put("fairway.dns.refresh.min", "1s");
    expected.put("fairway.dns.refresh.max", "5m");
    expected.forEach((name, value) -> {
      assertThat(properties).as(name).containsKey(name);
      Object actual = properties.get(name).get("defaultValue");
      assertThat(actual instanceof Number n ? (Object) normalise(n) : actual).as(name + " default")
          .isEqualTo(value instanceof Number n ? normalise(n) : value);
    });
    // The only ones without a default are those whose default is not a value: computed or "none".
    List<String> withoutDefault = new ArrayList<>();
    properties.forEach((name, item) -> {
      if (name.startsWith("fairway") && !item.containsKey("defaultValue")) {
        withoutDefault.add(name);
      }
    });
    assertThat(withoutDefault).containsExactlyInAnyOrder("fairway.default.local-zone",
        "fairway.default.affinity-header", "fairway.default.active-health.path", "fairway.server.load-reports.workers",
        "fairway.services", "fairway.default.subset.size",
        // Consul's agent settings: by default what Consul's own environment variables say.
        "fairway.consul.address", "fairway.consul.token", "fairway.consul.token-file", "fairway.consul.datacenter",
        "fairway.consul.namespace", "fairway.consul.partition", "fairway.consul.service-name",
        "fairway.consul.instance-id", "fairway.consul.tls.verify", "fairway.consul.tls.ca-certificate",
        "fairway.consul.tls.ca-path", "fairway.consul.tls.client-certificate", "fairway.consul.tls.client-key",
        "fairway.consul.tls.server-name",
        // Kubernetes: by default what the pod's service account says, or each slice's only port.
        "fairway.kubernetes.namespace", "fairway.kubernetes.port-name", "fairway.kubernetes.port",
        "fairway.kubernetes.local-zone", "fairway.kubernetes.api-server", "fairway.kubernetes.token-file",
        "fairway.kubernetes.ca-certificate",
        // DNS: the system's resolver; each service's records are the application's to name.
        "fairway.dns.resolver", "fairway.dns.services");
  }

  private static Object normalise(Number n) {
    return n.doubleValue() == Math.rint(n.doubleValue()) ? (Object) n.longValue() : (Object) n.doubleValue();
  }

  @Test
  @SuppressWarnings("unchecked")
  void strategyAndHedging_haveValueHints() throws IOException {
    Map<String, Map<String, Object>> hints = byName(metadata(), "hints");
    List<String> strategies = new ArrayList<>();
    for (Object v : (List<Object>) hints.get("fairway.default.strategy").get("values")) {
      strategies.add((String) ((Map<String, Object>) v).get("value"));
    }
    // Every name Strategy.named accepts, and nothing else.
    assertThat(strategies).containsExactlyInAnyOrder("least-queueing", "round-robin", "weighted-round-robin", "random",
        "least-connections", "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time",
        "concurrency-limited");
    for (String name : strategies) {
      assertThat(dev.fairway.lb.Strategy.named(name).name()).isEqualTo(name);
    }
    List<String> hedging = new ArrayList<>();
    for (Object v : (List<Object>) hints.get("fairway.default.hedging").get("values")) {
      hedging.add((String) ((Map<String, Object>) v).get("value"));
    }
    assertThat(hedging).containsExactly("off", "p95", "p99", "50ms");
    // Every hinted hedging form is one the starter accepts.
    for (String form : hedging) {
      HedgingSettings.policy(new ServiceSettings.Value<>(form, "fairway.default.hedging"));
    }
  }
}
