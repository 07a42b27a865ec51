package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * The {@code application.yml} of README's "Spring Boot with Consul" section binds as written:
 * every key is a property of the starter (an unknown one fails the bind), and the values pass the
 * same checks as at startup, so the snippet cannot drift from the properties.
 */
class ReadmeConsulSnippetTest {

  static String consulYaml() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
    int section = readme.indexOf("### Spring Boot with Consul");
    assertThat(section).as("README's Spring Boot with Consul section").isNotNegative();
    Matcher m = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL).matcher(readme);
    assertThat(m.find(section)).as("a yaml block in that section").isTrue();
    return m.group(1);
  }

  @Test
  void theDocsConsulYaml_bindsToTheStartersProperties_andPassesTheirChecks() throws IOException {
    List<PropertySource<?>> yaml = new YamlPropertySourceLoader().load("README",
        new ByteArrayResource(consulYaml().getBytes(StandardCharsets.UTF_8)));
    Binder binder = new Binder(ConfigurationPropertySources.from(yaml));

    FairwayConsulProperties consul = binder.bind("fairway.consul", Bindable.of(FairwayConsulProperties.class),
        new NoUnboundElementsBindHandler(BindHandler.DEFAULT)).get();
    assertThat(consul.isEnabled()).isTrue();
    assertThat(consul.getAddress()).isEqualTo("https://127.0.0.1:8501");
    assertThat(consul.getTokenFile()).isEqualTo(Path.of("/run/secrets/consul"));
    assertThat(consul.getTls().getCaCertificate()).isEqualTo(Path.of("/etc/consul/ca.pem"));
    FairwayConsulAutoConfiguration.agent(consul); // every setter's own check (files are read at build)

    FairwayProperties fairway = new FairwayProperties();
    Map<String, FairwayProperties.Service> services = binder.bind("fairway.services",
        Bindable.mapOf(String.class, FairwayProperties.Service.class), new NoUnboundElementsBindHandler(BindHandler.DEFAULT)).get();
    fairway.getServices().putAll(services);
    ServiceSettings orders = new FairwaySettings(fairway, "").forService("orders");
    assertThat(orders.strategy.name()).isEqualTo("least-connections");
    assertThat(orders.subsetSize.value()).isEqualTo(10);
  }
}
