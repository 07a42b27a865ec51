package probe;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.metrics.buffering.BufferingApplicationStartup;
import org.springframework.boot.context.metrics.buffering.StartupTimeline;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.metrics.StartupStep;
import org.springframework.web.client.RestClient;

/**
 * A small Spring Cloud web application (servlet, actuator, Spring Cloud LoadBalancer with simple
 * discovery, one @LoadBalanced RestClient.Builder) that prints how long it took from JVM start to
 * ready and exits. Run with and without the Fairway starter on the class path; -Dprofile=true
 * also prints the startup steps (BufferingApplicationStartup) that mention Fairway or took long.
 */
@SpringBootApplication
public class StartupProbe {
  @Bean
  @LoadBalanced
  RestClient.Builder orders() {
    return RestClient.builder();
  }

  public static void main(String[] args) {
    boolean profile = Boolean.getBoolean("profile");
    SpringApplication app = new SpringApplication(StartupProbe.class);
    BufferingApplicationStartup buffer = profile ? new BufferingApplicationStartup(200_000) : null;
    if (buffer != null) {
      app.setApplicationStartup(buffer);
    }
    ConfigurableApplicationContext context = app.run(args);
    long readyMillis = System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
    long classes = ManagementFactory.getClassLoadingMXBean().getTotalLoadedClassCount();
    // CPU time of the whole process (every thread, JIT and GC included) until ready: far less
    // sensitive than wall time to other processes on a loaded machine.
    long cpuMillis = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime() / 1_000_000;
    boolean fairway = context.containsBean("fairwaySettings");
    System.out.println("STARTUP fairway=" + fairway + " readyMillis=" + readyMillis + " cpuMillis=" + cpuMillis
        + " classes=" + classes);
    if (buffer != null) {
      report(buffer.getBufferedTimeline());
    }
    context.close();
    System.exit(0);
  }

  private static void report(StartupTimeline timeline) {
    Map<Long, StartupTimeline.TimelineEvent> byId = new TreeMap<>();
    for (StartupTimeline.TimelineEvent e : timeline.getEvents()) {
      byId.put(e.getStartupStep().getId(), e);
    }
    Map<String, Duration> fairwayByStep = new TreeMap<>();
    System.out.println("PROFILE steps naming fairway: total, then self (minus nested steps), then the nested steps:");
    for (StartupTimeline.TimelineEvent e : timeline.getEvents()) {
      String text = describe(e.getStartupStep());
      if (!text.toLowerCase().contains("fairway")) {
        continue;
      }
      fairwayByStep.merge(e.getStartupStep().getName(), e.getDuration(), Duration::plus);
      Duration nested = Duration.ZERO;
      List<String> children = new ArrayList<>();
      for (StartupTimeline.TimelineEvent c : timeline.getEvents()) {
        Long parent = c.getStartupStep().getParentId();
        if (parent != null && parent == e.getStartupStep().getId()) {
          nested = nested.plus(c.getDuration());
          children.add(String.format("      nested %6.1f ms  %s", millis(c.getDuration()), describe(c.getStartupStep())));
        }
      }
      System.out.println(String.format("  %6.1f ms total %6.1f ms self  %s", millis(e.getDuration()),
          millis(e.getDuration().minus(nested)), text));
      children.forEach(System.out::println);
    }
    fairwayByStep.forEach((name, d) -> System.out.println("PROFILE total " + name + " " + d.toMillis() + " ms"));
  }

  private static String describe(StartupStep step) {
    StringBuilder text = new StringBuilder(step.getName());
    step.getTags().forEach(t -> text.append(' ').append(t.getKey()).append('=').append(t.getValue()));
    return text.toString();
  }

  private static double millis(Duration d) {
    return d.toNanos() / 1e6;
  }
}
