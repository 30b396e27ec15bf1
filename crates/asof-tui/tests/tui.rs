//! The TUI without a terminal: app state driven by actions, and screens rendered
//! into ratatui's `TestBackend` (text snapshots plus direct checks of key styles).
//! (How the binary opens it — its review file, a real terminal — is tested at
//! the workspace's root, tests/integration/.)

mod source;

use asof_core::time::parse;
use asof_store::query::timeline::Timeline;
use asof_tui::tui::action::Action;
use asof_tui::tui::app::{App, Focus, SPEEDS_MS, TICK_MS};
use asof_tui::tui::state::beliefs::{BeliefRowKind, agent_of, claim_of};
use asof_tui::tui::state::popup::Popup;
use asof_tui::tui::theme::Theme;
use asof_tui::tui::ui;
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

fn demo(color: bool, size: (u16, u16)) -> App {
    let timeline = Timeline::load(source::demo().unwrap()).unwrap();
    App::new(timeline, Theme { color }, size)
}

fn at(t: &str) -> i64 {
    parse(t).unwrap()
}

fn draw(app: &App) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap();
    terminal.draw(|f| ui::render(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        for x in 0..area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The first cell whose row contains `needle`, at the needle's first character.
fn find(buffer: &Buffer, needle: &str) -> (u16, u16) {
    let screen = text(buffer);
    for (y, line) in screen.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            let x = line[..byte].chars().count() as u16;
            return (x, y as u16);
        }
    }
    panic!("`{needle}` is not on screen:\n{screen}");
}

/// Selects evidence `id` in the focused evidence list the way a user would:
/// to the top, then down to it.
/// The claim of the beliefs panel's selected row.
fn selected_claim(app: &App) -> String {
    let row = &app.beliefs.rows[app.beliefs.list.items()[app.beliefs.list.selected()]];
    claim_of(&app.timeline, row).to_owned()
}

fn select_evidence(app: &mut App, id: &str) {
    let at = app
        .evidence
        .list
        .items()
        .iter()
        .position(|&i| app.timeline.evidence_item(i).evidence.id == id)
        .unwrap_or_else(|| panic!("{id} is in the list"));
    app.update(Action::Top);
    for _ in 0..at {
        app.update(Action::Down);
    }
    assert_eq!(
        app.evidence
            .list
            .selected_item()
            .map(|i| app.timeline.evidence_item(i).evidence.id.clone())
            .as_deref(),
        Some(id)
    );
}

fn rows_of(app: &App) -> Vec<(BeliefRowKind, String, String, String)> {
    app.beliefs
        .list
        .items()
        .iter()
        .map(|&i| {
            let r = &app.beliefs.rows[i];
            (
                r.kind.clone(),
                agent_of(&app.timeline, r).to_owned(),
                claim_of(&app.timeline, r).to_owned(),
                r.note.text.clone(),
            )
        })
        .collect()
}

#[test]
fn opens_at_the_end_and_steps_between_events() {
    let mut app = demo(false, (120, 40));
    assert_eq!(app.cursor, at("2026-03-16T10:10:00Z"));
    assert_eq!(app.event_position, (85, 85));
    app.update(Action::Start);
    assert_eq!(app.cursor, at("2026-03-02T09:14:00Z"));
    app.update(Action::NextEvent);
    app.update(Action::NextEvent);
    assert_eq!(
        app.cursor,
        at("2026-03-02T09:20:00Z"),
        "B1 and B2 share 09:20"
    );
    assert_eq!(app.event_position, (4, 85));
    app.update(Action::NextEvent);
    app.update(Action::PrevEvent);
    assert_eq!(app.cursor, at("2026-03-02T09:20:00Z"));
    let before = app.cursor;
    app.update(Action::StepForward);
    assert_eq!(app.cursor - before, app.scrubber.step());
    app.update(Action::StepBack);
    assert_eq!(app.cursor, before);
    app.update(Action::End);
    assert_eq!(app.cursor, at("2026-03-16T10:10:00Z"));
}

#[test]
fn zoom_narrows_around_the_cursor_and_keeps_it_in_view() {
    let mut app = demo(false, (120, 40));
    app.seek(at("2026-03-03T12:10:00Z"));
    let full = app.scrubber.view.1 - app.scrubber.view.0;
    app.update(Action::ZoomIn);
    app.update(Action::ZoomIn);
    assert_eq!(app.scrubber.view.1 - app.scrubber.view.0, full / 4);
    assert!(app.scrubber.view.0 <= app.cursor && app.cursor <= app.scrubber.view.1);
    let step = app.scrubber.step();
    app.update(Action::ZoomOut);
    assert!(app.scrubber.step() >= step);
    for _ in 0..10 {
        app.update(Action::ZoomOut);
    }
    assert_eq!(
        app.scrubber.view.1 - app.scrubber.view.0,
        full,
        "never wider than the whole log"
    );
    app.update(Action::End);
    for _ in 0..30 {
        app.update(Action::ZoomIn);
    }
    assert!(
        app.scrubber.view.1 - app.scrubber.view.0 >= 10_000,
        "at least 10 ms wide (a short agent run is read event by event)"
    );
    assert!(app.scrubber.view.0 <= app.cursor && app.cursor <= app.scrubber.view.1);
}

#[test]
fn the_beliefs_show_what_just_changed_and_who_disagrees() {
    let mut app = demo(false, (120, 40));
    app.seek(at("2026-03-03T12:10:00Z"));
    let rows = rows_of(&app);
    // The root-cause section: its heading, then exactly these three rows.
    let root: Vec<_> = rows[1..]
        .iter()
        .take_while(|r| !matches!(&r.0, BeliefRowKind::Topic { .. }))
        .collect();
    assert_eq!(root.len(), 3, "{root:?}");
    assert!(
        matches!(&rows[0].0, BeliefRowKind::Topic { conflict: true, .. }),
        "triage and infra disagree: {:?}",
        rows[0]
    );
    assert!(rows.contains(&(
        BeliefRowKind::Held,
        "triage".into(),
        "Bad deploy of checkout-service v4.12".into(),
        "+ new".into()
    )));
    assert!(rows.contains(&(
        BeliefRowKind::ClosedNow,
        "triage".into(),
        "Expired TLS certificate on the card-network gateway".into(),
        "✗ superseded by B19".into()
    )));
    assert!(rows.contains(&(
        BeliefRowKind::Held,
        "infra".into(),
        "Card-network provider outage".into(),
        String::new()
    )));

    app.seek(at("2026-03-02T10:40:00Z"));
    let rows = rows_of(&app);
    assert!(rows.contains(&(
        BeliefRowKind::Held,
        "triage".into(),
        "Payments DB primary overloaded".into(),
        "↻ reconfirmed by B8 on E5".into()
    )));
    assert!(matches!(
        &rows[0].0,
        BeliefRowKind::Topic {
            conflict: false,
            ..
        }
    ));

    app.seek(at("2026-03-06T10:15:00Z"));
    let rows = rows_of(&app);
    let clipped = rows
        .iter()
        .find(|r| r.2.starts_with("Expired") && r.1 == "triage" && r.3.contains("new"))
        .unwrap();
    assert_eq!(clipped.0, BeliefRowKind::Held);
}

#[test]
fn the_selection_follows_the_same_belief_as_the_cursor_moves() {
    let mut app = demo(false, (120, 40));
    app.seek(at("2026-03-02T09:20:00Z"));
    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Beliefs);
    app.update(Action::Down);
    let selected = selected_claim;
    assert_eq!(selected(&app), "Payments DB primary overloaded");
    app.update(Action::NextEvent);
    app.update(Action::NextEvent);
    assert_eq!(selected(&app), "Payments DB primary overloaded");
}

#[test]
fn enter_opens_history_and_evidence_details() {
    let mut app = demo(false, (120, 40));
    app.update(Action::FocusNext);
    app.update(Action::Open);
    let Some(Popup::Text(view)) = &app.popup else {
        panic!("history opens")
    };
    assert!(view.title.contains("History: root-cause"));
    assert!(
        view.lines
            .iter()
            .any(|l| l.text.contains("retracted by R2"))
    );
    assert!(
        view.lines
            .iter()
            .any(|l| l.text.contains("B8 triage reconfirms"))
    );
    app.update(Action::Back);
    assert!(app.popup.is_none());

    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Plane);
    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Evidence);
    app.update(Action::Top);
    for _ in 0..27 {
        app.update(Action::Down);
    }
    app.update(Action::Open);
    let Some(Popup::Text(view)) = &app.popup else {
        panic!("details open")
    };
    assert_eq!(view.title, " Evidence E28 ");
    assert!(
        view.lines
            .iter()
            .any(|l| l.text.contains("s3://audit/card-gw/2026-03-02.log.gz:1187"))
    );
    assert!(
        view.lines
            .iter()
            .any(|l| l.text.contains("(late-arriving)"))
    );
    app.update(Action::Quit);
    assert!(app.quit);
}

#[test]
fn filter_narrows_the_focused_list_and_esc_clears_it() {
    let mut app = demo(false, (120, 40));
    app.update(Action::FocusPrev);
    assert_eq!(app.focus, Focus::Evidence);
    app.update(Action::Filter);
    for c in "audit".chars() {
        app.update(Action::Type(c));
    }
    assert_eq!(app.evidence.list.items().len(), 1, "live as you type");
    app.update(Action::Open);
    assert!(app.popup.is_none());
    assert_eq!(app.evidence.list.filter, "audit");
    app.update(Action::Back);
    assert_eq!(app.evidence.list.items().len(), 33);

    app.update(Action::FocusPrev);
    app.update(Action::FocusPrev);
    assert_eq!(app.focus, Focus::Beliefs);
    app.update(Action::Filter);
    for c in "sev".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    let topics: Vec<&str> = app
        .beliefs
        .list
        .items()
        .iter()
        .map(|&i| {
            app.timeline.header.topics[app.beliefs.rows[i].topic]
                .id
                .as_str()
        })
        .collect();
    assert!(topics.iter().all(|t| *t == "severity"), "{topics:?}");
}

#[test]
fn jump_takes_typed_times_and_reports_bad_ones() {
    let mut app = demo(false, (120, 40));
    app.update(Action::Jump);
    for c in "2026-03-03 12:10".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    assert_eq!(app.cursor, at("2026-03-03T12:10:00Z"));
    app.update(Action::Jump);
    for c in "09:00".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Edit(asof_tui::tui::action::Edit::Backspace));
    app.update(Action::Type('5'));
    app.update(Action::Open);
    assert_eq!(
        app.cursor,
        at("2026-03-03T09:05:00Z"),
        "a clock time on the cursor's day"
    );
    // A time that does not read keeps the prompt open with its text, to mend.
    app.update(Action::Jump);
    for c in "03-03 12:0x".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    let Some(Popup::Prompt(prompt)) = &app.popup else {
        panic!("the prompt stays open: {:?}", app.popup);
    };
    assert_eq!(prompt.text, "03-03 12:0x");
    assert!(
        prompt.error.as_deref().unwrap().contains("is not a time"),
        "{prompt:?}"
    );
    assert!(text(&draw(&app)).contains("is not a time: write 2026-03-03T12:00:00Z"));
    assert_eq!(app.cursor, at("2026-03-03T09:05:00Z"));
    app.update(Action::Edit(asof_tui::tui::action::Edit::Home));
    for c in "2026-".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Edit(asof_tui::tui::action::Edit::End));
    app.update(Action::Edit(asof_tui::tui::action::Edit::Backspace));
    app.update(Action::Type('5'));
    app.update(Action::Open);
    assert!(app.popup.is_none());
    assert_eq!(app.cursor, at("2026-03-03T12:05:00Z"));
}

#[test]
fn play_advances_one_event_per_interval_and_stops_at_the_end() {
    let mut app = demo(false, (120, 40));
    app.update(Action::TogglePlay);
    assert!(app.playing);
    assert_eq!(
        app.cursor,
        at("2026-03-02T09:14:00Z"),
        "play at the end restarts from the start"
    );
    let ticks = SPEEDS_MS[app.speed] / TICK_MS;
    for _ in 0..ticks - 1 {
        assert!(!app.update(Action::Tick), "no redraw between steps");
    }
    assert!(app.update(Action::Tick));
    assert_eq!(app.cursor, at("2026-03-02T09:16:00Z"));
    app.update(Action::Faster);
    app.update(Action::Faster);
    assert!(SPEEDS_MS[app.speed] < SPEEDS_MS[1]);
    app.update(Action::End);
    for _ in 0..ticks {
        app.update(Action::Tick);
    }
    assert!(!app.playing);
    app.update(Action::TogglePlay);
    app.update(Action::TogglePlay);
    assert!(!app.playing);
    assert!(!app.update(Action::Tick), "paused: ticks change nothing");
}

#[test]
fn the_mouse_seeks_selects_and_scrolls() {
    let mut app = demo(false, (120, 40));
    let areas = app.areas();
    let lanes = asof_tui::tui::layout::scrubber_lanes(areas.scrubber);
    app.update(Action::Click(lanes.x, lanes.y));
    assert_eq!(
        app.cursor,
        app.scrubber.time_at_column(areas.scrubber, lanes.x)
    );
    // A click lands on a time the zoom resolves, not on a microsecond.
    assert_eq!(
        app.cursor % 60_000_000,
        0,
        "{}",
        asof_core::time::format(app.cursor)
    );
    assert!(app.cursor - app.scrubber.view.0 < app.scrubber.step() * 2);
    app.update(Action::Click(lanes.x + lanes.width - 1, lanes.y));
    assert!(app.cursor > at("2026-03-16T00:00:00Z"));
    let beliefs = areas.beliefs.unwrap();
    app.update(Action::Click(beliefs.x + 3, beliefs.y + 3));
    assert_eq!(app.focus, Focus::Beliefs);
    assert_eq!(app.beliefs.list.selected(), 2);
    let before = app.cursor;
    app.update(Action::Wheel(false, lanes.x + 5, lanes.y));
    assert_eq!(app.cursor, before - app.scrubber.step());
    let evidence = areas.evidence.unwrap();
    let before = app.evidence.list.selected();
    app.update(Action::Wheel(false, evidence.x + 2, evidence.y + 3));
    assert_eq!(
        (app.focus, app.evidence.list.selected()),
        (Focus::Evidence, before - 3)
    );
}

#[test]
fn help_lists_every_key_and_esc_closes_it() {
    let mut app = demo(false, (120, 40));
    app.update(Action::Help);
    let screen = text(&draw(&app));
    for needle in [
        "←/→ h/l",
        "[/]",
        "Space",
        "z/Z",
        "Tab/S-Tab",
        "Enter",
        "/",
        "Esc",
        "Ctrl-C",
    ] {
        assert!(screen.contains(needle), "help shows {needle}:\n{screen}");
    }
    app.update(Action::Back);
    assert!(app.popup.is_none());
    assert!(!app.quit);
    // Esc never quits: with nothing to close it says what does.
    app.update(Action::Back);
    assert!(!app.quit, "Esc with nothing to close does not quit");
    assert_eq!(app.status.as_deref(), Some("nothing to close: q quits"));
    app.update(Action::Quit);
    assert!(app.quit);
}

fn snapshot_app(size: (u16, u16)) -> App {
    let mut app = demo(false, size);
    app.seek(at("2026-03-03T12:10:00Z"));
    app
}

#[test]
fn snapshot_80x24() {
    insta::assert_snapshot!(text(&draw(&snapshot_app((80, 24)))));
}

#[test]
fn snapshot_120x40() {
    insta::assert_snapshot!(text(&draw(&snapshot_app((120, 40)))));
}

#[test]
fn snapshot_too_small() {
    insta::assert_snapshot!(text(&draw(&snapshot_app((40, 10)))));
}

#[test]
fn snapshot_history_popup() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusNext);
    app.update(Action::Open);
    insta::assert_snapshot!(text(&draw(&app)));
}

#[test]
fn key_cells_carry_their_styles() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusNext);
    app.update(Action::Down);
    let buffer = draw(&app);
    // The selected belief is in reverse video.
    let (x, y) = find(&buffer, "triage Bad deploy");
    assert!(buffer[(x, y)].modifier.contains(Modifier::REVERSED));
    // The belief closed just now is struck through.
    let (_, y) = find(&buffer, "✗ by B19│");
    let (x, _) = find(&buffer, "triage Expired TLS");
    let x = x + "triage ".chars().count() as u16;
    assert!(buffer[(x, y)].modifier.contains(Modifier::CROSSED_OUT));
    // A stale belief (design.md §4) is dimmed, its decayed confidence and ⌛ beside the stated one.
    let (x, y) = find(&buffer, "infra  Card-network");
    let x = x + "infra  ".chars().count() as u16;
    assert!(buffer[(x, y)].modifier.contains(Modifier::DIM));
    let (cx, cy) = find(&buffer, "0.50→0.12");
    assert_eq!(
        cy, y,
        "the stale row carries its effective confidence and ⌛"
    );
    assert!(buffer[(cx, cy)].modifier.contains(Modifier::DIM));
    let (x, y) = find(&buffer, "triage Bad deploy");
    assert!(
        !buffer[(x + 8, y)].modifier.contains(Modifier::DIM),
        "a fresh belief is not dimmed"
    );
    // Evidence recorded after the cursor is dim ...
    let (x, y) = find(&buffer, "E16 ");
    assert!(buffer[(x, y)].modifier.contains(Modifier::DIM));
    assert_eq!(
        buffer[(x, y)].fg,
        Color::Reset,
        "NO_COLOR: no colour at all"
    );
    // ... and the focused panel is marked in its title, not by colour alone.
    find(&buffer, "▶ Beliefs held at 03-03 12:10");
    // Late evidence (its lag counted from the end of what it observed)
    // stands out without colour (bold) ...
    app.seek(at("2026-03-06T10:00:00Z"));
    let (x, y) = find(&draw(&app), "!4d 0h");
    assert!(draw(&app)[(x, y)].modifier.contains(Modifier::BOLD));

    // ... and in red where there is colour.
    let mut app = demo(true, (120, 40));
    app.seek(at("2026-03-06T10:00:00Z"));
    let buffer = draw(&app);
    let (x, y) = find(&buffer, "!4d 0h");
    assert_eq!(buffer[(x, y)].fg, Color::LightRed);
    let (x, y) = find(&buffer, "recorded ▸");
    assert_eq!(buffer[(x, y)].bg, Color::Yellow);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn drawing_never_panics(
        w in 1u16..=250,
        h in 1u16..=80,
        cursor in -1_000_000_000_000i64..3_000_000_000_000,
        actions in proptest::collection::vec(0usize..30, 0..14),
    ) {
        let mut app = demo(w % 2 == 0, (w, h));
        app.seek(at("2026-03-02T00:00:00Z") + cursor);
        let menu = [Action::ZoomIn, Action::ZoomOut, Action::FocusNext, Action::Down, Action::PageDown, Action::Open,
            Action::Help, Action::Back, Action::Filter, Action::Type('e'), Action::Jump, Action::Bottom,
            Action::ToggleValid, Action::PlaneLeft, Action::PlaneUp, Action::PlaneZoomIn, Action::PlaneZoomOut,
            Action::Click(w / 2, h / 2), Action::Click(w.saturating_sub(3), h.saturating_sub(5)),
            // Prompts and popups: editing, scrolling both ways, the full-screen plane.
            Action::Edit(asof_tui::tui::action::Edit::Home), Action::Edit(asof_tui::tui::action::Edit::Delete),
            Action::Edit(asof_tui::tui::action::Edit::Backspace), Action::Edit(asof_tui::tui::action::Edit::End),
            Action::Type('é'), Action::ScrollRight, Action::ScrollLeft, Action::PageUp, Action::Top,
            Action::PlaneFull, Action::Resize(w / 2 + 1, h / 2 + 1)];
        for a in actions {
            app.update(menu[a]);
        }
        draw(&app);
    }
}

/// `assets/tui-demo.txt` is the screen the README shows: it must stay what the
/// TUI draws. Regenerate with `UPDATE_ASSETS=1 cargo test -p asof-tui --test tui`.
#[test]
fn the_readme_capture_is_current() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusNext);
    let screen = text(&draw(&app));
    let path = &source::root().join("assets/tui-demo.txt");
    if std::env::var_os("UPDATE_ASSETS").is_some() {
        std::fs::write(path, &screen).unwrap();
    }
    let saved = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(
        saved, screen,
        "assets/tui-demo.txt is stale: run UPDATE_ASSETS=1 cargo test -p asof-tui --test tui"
    );
    let readme = std::fs::read_to_string(source::root().join("README.md")).unwrap();
    assert!(
        readme.contains(&screen),
        "README.md shows assets/tui-demo.txt verbatim"
    );
}

fn app_for(dataset: &str, size: (u16, u16)) -> App {
    let store = source::open(Some(std::path::Path::new(dataset))).unwrap();
    App::new(Timeline::load(store).unwrap(), Theme { color: false }, size)
}

#[test]
fn snapshot_plane_of_a_late_arriving_log() {
    let mut app = app_for("datasets/late-arriving-log.yaml", (100, 30));
    app.update(Action::FocusNext);
    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Plane);
    let area = app.areas().plane.unwrap();
    let grid = asof_tui::tui::layout::plane_grid(area);
    // Crosshair on the clipped "backed up" piece: about 09:00, as of the end.
    // `v` frees the valid cursor where it is; ← walks it back, the plane following.
    app.update(Action::ToggleValid);
    assert_eq!(app.valid_at(), app.cursor, "freed in place");
    while app.valid_at() > at("2026-05-04T09:00:00Z") {
        app.update(Action::PlaneLeft);
    }
    let g = asof_tui::tui::plane_model::Geometry::new(&app.plane.plane, grid);
    assert!(
        g.col_of(app.valid_at()).is_some(),
        "the crosshair stays on the plot"
    );
    let _ = grid;
    assert!(
        app.plane.reading.text.contains(": backed up (0.60)"),
        "{}",
        app.plane.reading.text
    );
    insta::assert_snapshot!(text(&draw(&app)));
}

/// The crosshair's reading is `believed(recorded, about valid)` for the plane's
/// topic and agent, wherever the crosshair goes.
#[test]
fn the_crosshair_reading_always_agrees_with_believed() {
    for (dataset, topic_rows) in [
        ("datasets/payment-outage.yaml", 3usize),
        ("datasets/retroactive-correction.yaml", 1),
        ("datasets/late-arriving-log.yaml", 1),
    ] {
        let open = || source::open(Some(std::path::Path::new(dataset))).unwrap();
        let store = open();
        let mut app = App::new(
            Timeline::load(open()).unwrap(),
            Theme { color: false },
            (120, 40),
        );
        app.update(Action::FocusNext);
        for _ in 0..topic_rows {
            app.update(Action::Down);
        }
        app.update(Action::FocusNext);
        let area = app.areas().plane.unwrap();
        let grid = asof_tui::tui::layout::plane_grid(area);
        let mut checked = 0;
        for (zoom, y_step, x_step) in [(0, 1, 3), (2, 2, 5)] {
            for _ in 0..zoom {
                app.update(Action::PlaneZoomIn);
            }
            for y in (grid.y..grid.bottom()).step_by(y_step) {
                for x in (grid.x..grid.right()).step_by(x_step) {
                    app.update(Action::Click(x, y));
                    let topic = app.timeline.header.topics[app.plane.plane.topic].id.clone();
                    let filter = asof_store::query::Filter {
                        agent: app.plane.plane.agent.clone(),
                        topic: Some(topic),
                    };
                    let sql = asof_store::query::believed(
                        &store,
                        app.cursor,
                        Some(app.valid_at()),
                        &filter,
                    )
                    .unwrap();
                    let ids: Vec<u64> = sql.iter().map(|b| b.version.id).collect();
                    assert_eq!(app.plane.reading.versions, ids, "{dataset} at ({x}, {y})");
                    match sql.first() {
                        Some(b) => assert!(app.plane.reading.text.contains(&*b.version.claim)),
                        None => assert!(
                            app.plane.reading.text.ends_with(": nothing"),
                            "{}",
                            app.plane.reading.text
                        ),
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 100);
    }
}

#[test]
fn v_frees_the_valid_cursor_and_arrows_move_it() {
    let mut app = snapshot_app((120, 40));
    assert!(!app.plane.valid_free);
    assert_eq!(
        app.valid_at(),
        app.cursor,
        "the valid cursor follows the diagonal"
    );
    app.update(Action::FocusNext);
    app.update(Action::FocusNext);
    app.update(Action::ToggleValid);
    assert!(app.plane.valid_free);
    assert!(
        text(&draw(&app)).contains("about ▸ "),
        "the header shows the free valid cursor"
    );
    let before = (app.valid_at(), app.cursor);
    app.update(Action::PlaneRight);
    assert_eq!(app.valid_at(), before.0 + app.plane.plane.valid_step());
    assert_eq!(app.cursor, before.1, "recorded time stays");
    app.update(Action::PlaneUp);
    assert!(app.cursor > before.1);
    app.update(Action::Open);
    match &app.popup {
        Some(Popup::Text(view)) => assert!(view.title.starts_with(" Version ")),
        None => assert!(app.status.as_deref().unwrap().contains("nothing")),
        other => panic!("{other:?}"),
    }
    app.update(Action::Back);
    app.update(Action::ToggleValid);
    assert_eq!(app.valid_at(), app.cursor);
}

#[test]
fn the_plane_follows_the_selected_topic_and_draws_an_empty_topic() {
    let yaml = "asof: 1\nincident: {id: x}\nagents: [{id: a}]\ntopics: [{id: t}, {id: empty}]\nevents:\n  - believe: {agent: a, topic: t, claim: c, valid_from: 2026-01-01, recorded_at: 2026-01-02}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.yaml");
    std::fs::write(&path, yaml).unwrap();
    let mut app = app_for(path.to_str().unwrap(), (120, 40));
    app.update(Action::FocusNext);
    assert_eq!(app.plane.plane.topic, 0);
    assert_eq!(app.plane.plane.shapes.len(), 1);
    app.update(Action::Bottom);
    assert_eq!(app.plane.plane.topic, 1);
    assert!(app.plane.plane.shapes.is_empty());
    assert_eq!(
        app.plane.reading.text,
        "no agent holds beliefs on this topic"
    );
    let screen = text(&draw(&app));
    assert!(screen.contains("Plane · empty · no agent"), "{screen}");
}

fn demo_log() -> asof_core::model::Dataset {
    source::demo().unwrap().log().unwrap()
}

/// `w` asks for a fork and returns at once; the "worker" here is the test, which
/// runs the fork itself and hands the result back as the event loop would.
#[test]
fn a_fork_runs_off_the_ui_and_c_cycles_compare_fork_parent() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::Fork);
    assert!(
        app.status
            .as_deref()
            .unwrap()
            .contains("select an evidence item")
    );
    app.update(Action::FocusPrev);
    assert_eq!(app.focus, Focus::Evidence);
    select_evidence(&mut app, "E15");
    app.update(Action::Fork);
    assert_eq!(app.whatif.busy.as_deref(), Some("replaying without E15"));
    let request = app.take_fork_request();
    assert_eq!(
        request,
        Some(asof_tui::tui::fork_worker::ForkRequest::without("E15"))
    );
    assert_eq!(app.take_fork_request(), None, "handed out once");
    // Input stays responsive while the worker runs.
    let before = app.cursor;
    app.update(Action::PrevEvent);
    assert!(app.cursor < before);
    assert!(app.update(Action::Tick), "the spinner turns");
    app.update(Action::Fork);
    assert_eq!(app.status.as_deref(), Some("a fork is already running"));

    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let result = asof_tui::tui::fork_worker::run_fork(&log, &parent, "demo", "", "E15");
    app.fork_finished(result);
    assert!(app.whatif.busy.is_none());
    assert!(matches!(app.popup, Some(Popup::Compare(_))));
    let screen = text(&draw(&app));
    assert!(
        screen.contains("What-if without E15 — a replay, not a causal model"),
        "{screen}"
    );
    assert!(
        screen.contains("parent 03-05 09:15 · fork 03-03 10:30 (1d 22h sooner)"),
        "{screen}"
    );
    insta::assert_snapshot!("compare_view", screen);

    app.update(Action::Compare);
    assert!(app.whatif.showing_fork && app.popup.is_none());
    assert!(app.timeline.label.contains("without E15"));
    assert_eq!(app.timeline.evidence_count(), 32);
    assert!(text(&draw(&app)).contains("WHAT-IF without E15: a replay, not the record"));
    app.seek(at("2026-03-03T13:00:00Z"));
    let claims: Vec<&str> = app
        .beliefs
        .rows
        .iter()
        .filter(|r| agent_of(&app.timeline, r) == "triage" && r.topic == 0)
        .map(|r| claim_of(&app.timeline, r))
        .collect();
    assert_eq!(
        claims,
        vec!["Expired TLS certificate on the card-network gateway"],
        "no deploy theory in the fork"
    );
    app.update(Action::Compare);
    assert!(!app.whatif.showing_fork);
    assert_eq!(app.timeline.evidence_count(), 33);
}

/// `c` keeps the evidence selection on the same item across the parent and
/// the fork; the item the fork removed is said missing there and selected
/// again back in the parent, so `m` never offers to mark another item.
#[test]
fn c_keeps_the_selected_evidence_item() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusPrev);
    let selected = |app: &App| {
        app.evidence
            .list
            .selected_item()
            .map(|i| app.timeline.evidence_item(i).evidence.id.clone())
    };
    select_evidence(&mut app, "E15");
    app.update(Action::Fork);
    let request = app.take_fork_request();
    assert_eq!(
        request,
        Some(asof_tui::tui::fork_worker::ForkRequest::without("E15"))
    );
    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    app.fork_finished(asof_tui::tui::fork_worker::run_fork(
        &log, &parent, "demo", "", "E15",
    ));
    app.update(Action::Compare);
    assert!(app.whatif.showing_fork);
    assert!(
        app.status
            .as_deref()
            .unwrap_or_default()
            .contains("E15 is not in the fork"),
        "{:?}",
        app.status
    );
    app.update(Action::Compare);
    assert!(!app.whatif.showing_fork);
    assert_eq!(
        selected(&app).as_deref(),
        Some("E15"),
        "selected again in the parent"
    );
    // An item in both stays selected both ways.
    select_evidence(&mut app, "E14");
    app.update(Action::Compare);
    app.update(Action::Compare);
    assert!(app.whatif.showing_fork);
    assert_eq!(selected(&app).as_deref(), Some("E14"));
}

#[test]
fn fork_failures_show_in_the_ui_and_influence_fills_a_column() {
    let mut app = snapshot_app((120, 40));
    app.fork_finished(Err(asof_store::fork::whatif::WhatIfError::Fork(
        asof_store::fork::ForkError::UnknownEvidence(vec!["E99".into()]),
    )));
    assert_eq!(
        app.status.as_deref(),
        Some("fork failed: no evidence with id E99; see `asof evidence` for the ids")
    );
    assert!(app.whatif.fork.is_none());
    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    app.influence_ready(asof_store::fork::influence::influence(&log, &parent));
    assert_eq!(
        app.whatif.influence.get("E15").map(String::as_str),
        Some("shift -1d 22h")
    );
    let screen = text(&draw(&app));
    assert!(
        screen.contains("INFLUENCE") && screen.contains("shift -1d 22h"),
        "{screen}"
    );
}

/// A fork of a store file in the TUI copies the store (as `asof fork` does)
/// instead of replaying its log in memory; it must show the same fork: the same
/// diff, the same beliefs, and the same lanes for the pairs that can differ.
#[test]
fn a_tui_fork_of_a_store_matches_the_in_memory_fork() {
    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let parsed =
        asof_core::dataset::read_str("demo", asof_core::dataset::Format::Yaml, source::DEMO_YAML)
            .unwrap();
    asof_store::store::Store::load(&db, &parsed, false, &[]).unwrap();
    for evidence in ["E15", "E14", "E28", "E1"] {
        let memory =
            asof_tui::tui::fork_worker::run_fork(&log, &parent, "demo", "", evidence).unwrap();
        let copied = asof_tui::tui::fork_worker::run_fork_of_store(&db, "demo", evidence).unwrap();
        assert_eq!(copied.diff, memory.diff, "{evidence}");
        assert_eq!(copied.report, memory.report, "{evidence}");
        assert_eq!(copied.span, memory.span, "{evidence}");
        let rows = |t: &asof_store::query::timeline::Timeline| {
            let all: Vec<usize> = (0..t.version_count()).collect();
            let mut rows: Vec<String> = t
                .beliefs(&all)
                .iter()
                .map(|b| {
                    let v = &b.version;
                    format!(
                        "{} {} {} {:?} {} {} {:?}",
                        v.agent,
                        v.topic,
                        v.claim,
                        v.valid,
                        v.recorded_at,
                        v.superseded_at,
                        b.supported_by
                    )
                })
                .collect();
            rows.sort();
            rows
        };
        assert_eq!(rows(&copied.timeline), rows(&memory.timeline), "{evidence}");
        assert!(!copied.lanes.is_empty(), "{evidence}");
        for lane in &copied.lanes {
            let same = memory
                .lanes
                .iter()
                .find(|l| l.agent == lane.agent && l.topic == lane.topic);
            match same {
                Some(l) => assert_eq!(l, lane, "{evidence}"),
                None => assert_eq!(
                    lane.parent, lane.fork,
                    "{evidence}: an unlisted pair differs"
                ),
            }
        }
        assert!(
            copied
                .timeline
                .label
                .contains(&format!("without {evidence}"))
        );
    }
}

// ---------------------------------------------------------------------------
// What a new reviewer tripped over (issue: the TUI rebuilt around per-panel
// state): one test each, at the sizes they were met at.

/// The screen after `actions`, at `size`, scrubbed to 03-03 12:10.
fn screen_after(size: (u16, u16), actions: &[Action]) -> (App, String) {
    let mut app = snapshot_app(size);
    for &a in actions {
        app.update(a);
    }
    let screen = text(&draw(&app));
    (app, screen)
}

#[test]
fn every_popup_scrolls_and_wide_text_scrolls_sideways_at_80x24() {
    // Help: its last section is below the fold until End.
    let (mut app, screen) = screen_after((80, 24), &[Action::Help]);
    assert!(!screen.contains("nothing changes"), "{screen}");
    assert!(screen.contains("lines 1-22 of"), "{screen}");
    app.update(Action::Bottom);
    let bottom = text(&draw(&app));
    assert!(bottom.contains("nothing changes"), "{bottom}");
    app.update(Action::PageUp);
    assert!(!text(&draw(&app)).contains("nothing changes"));
    // History: the last version is reachable, and its whole claim is too.
    let (mut app, _) = screen_after((80, 24), &[Action::FocusNext, Action::Open]);
    app.update(Action::Bottom);
    let before = text(&draw(&app));
    assert!(before.contains("03-06 11:00 → ∞"), "{before}");
    assert!(!before.contains("gateway  [supe"), "{before}");
    for _ in 0..6 {
        app.update(Action::ScrollRight);
    }
    let after = text(&draw(&app));
    // The claim whole; the line's cut end marked.
    assert!(after.contains("card-network gateway  [supe…"), "{after}");
    insta::assert_snapshot!("history_80x24_scrolled", after);
}

#[test]
fn claims_take_the_width_there_is_and_the_selection_shows_whole() {
    // 200 columns: no claim is cut.
    let (app, screen) = screen_after((200, 60), &[]);
    for row in &app.beliefs.rows {
        let claim = claim_of(&app.timeline, row);
        if row.belief.is_some() {
            assert!(screen.contains(claim), "`{claim}` is cut:\n{screen}");
        }
    }
    insta::assert_snapshot!("main_200x60", screen);
    // 80 columns: the selected belief is repeated whole under the list.
    let (_, screen) = screen_after((80, 40), &[Action::FocusNext, Action::Down, Action::Down]);
    assert!(
        screen.contains("▸ triage: Expired TLS certificate on the card-network gateway"),
        "{screen}"
    );
}

#[test]
fn the_valid_interval_stays_when_a_topic_shows_several_claims_at_120x40() {
    let (_, screen) = screen_after((120, 40), &[]);
    // customer-impact holds two shares at once, over different times, and
    // affected-regions several regions: their intervals tell why.
    for interval in [
        "[03-02 09:05, 10:20)",
        "[03-02 10:20, ∞)",
        "[03-02 09:40, ∞)",
    ] {
        assert!(screen.contains(interval), "{interval}:\n{screen}");
    }
}

#[test]
fn a_filter_shows_its_first_match_at_the_top_with_a_count() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusPrev);
    assert_eq!(app.focus, Focus::Evidence);
    app.update(Action::Bottom);
    assert!(app.evidence.list.offset() > 0);
    app.update(Action::Filter);
    for c in "cert".chars() {
        app.update(Action::Type(c));
    }
    assert_eq!(
        (app.evidence.list.selected(), app.evidence.list.offset()),
        (0, 0)
    );
    let screen = text(&draw(&app));
    let matches = app.evidence.list.matches();
    assert!(matches > 1);
    assert!(
        screen.contains(&format!("filter “cert”: {matches} matches")),
        "{screen}"
    );
    // Every match is on screen, none hidden above blank rows.
    for &i in app.evidence.list.items() {
        let id = &app.timeline.evidence_item(i).evidence.id;
        assert!(screen.contains(&format!("│{id} ")), "{id}:\n{screen}");
    }
    // `/` again starts a new filter.
    app.update(Action::Open);
    app.update(Action::Filter);
    let Some(Popup::Prompt(prompt)) = &app.popup else {
        panic!("a prompt");
    };
    assert_eq!(prompt.text, "");
}

#[test]
fn influence_and_the_compare_lanes_are_explained() {
    let (_, help) = screen_after((120, 40), &[Action::Help, Action::Bottom]);
    assert!(
        help.contains("INFLUENCE: what removing the item would change"),
        "{help}"
    );
    let mut app = snapshot_app((120, 40));
    app.influence_ready(vec![asof_store::fork::influence::Influence {
        evidence: "E15".into(),
        truth_shift_ms: -168_300_000,
        divergence_ms: 0,
        topics: vec!["root-cause".into()],
        pairs: Vec::new(),
    }]);
    app.update(Action::FocusPrev);
    select_evidence(&mut app, "E15");
    app.update(Action::Open);
    let details = text(&draw(&app));
    assert!(details.contains("influence    shift -1d 22h"), "{details}");
    assert!(
        details.contains("without it the resolution comes 1d 22h sooner"),
        "{details}"
    );
}

#[test]
fn esc_closes_and_clears_but_never_quits() {
    let mut app = snapshot_app((120, 40));
    for a in [Action::Help, Action::Back, Action::Back, Action::Back] {
        app.update(a);
        assert!(!app.quit, "{a:?}");
    }
    app.update(Action::FocusNext);
    app.update(Action::Filter);
    app.update(Action::Type('x'));
    app.update(Action::Open);
    assert!(app.beliefs.list.is_filtered());
    app.update(Action::Back);
    assert!(!app.beliefs.list.is_filtered() && !app.quit);
}

#[test]
fn the_plane_follows_the_crosshair_and_its_cell_matches_the_reading() {
    let mut app = snapshot_app((120, 40));
    for t in [
        "2026-03-02T09:30:00Z",
        "2026-03-05T12:00:00Z",
        "2026-03-16T00:00:00Z",
    ] {
        app.seek(at(t));
        let area = app.areas().plane.unwrap();
        let grid = asof_tui::tui::layout::plane_grid(area);
        let g = asof_tui::tui::plane_model::Geometry::new(&app.plane.plane, grid);
        let (cx, cy) = (g.col_of(app.valid_at()), g.row_of(app.cursor));
        assert!(
            cx.is_some() && cy.is_some(),
            "the crosshair is on the plot at {t}"
        );
        let buffer = draw(&app);
        let cell = buffer[(grid.x + cx.unwrap() as u16, grid.y + cy.unwrap() as u16)]
            .symbol()
            .to_owned();
        let expected = app
            .plane
            .reading
            .claim_index
            .map_or("┼", asof_tui::tui::theme::claim_glyph);
        assert_eq!(
            cell, expected,
            "the cell under the crosshair is what the reading says, at {t}"
        );
    }
    // v frees the valid cursor where it is.
    let before = app.valid_at();
    app.update(Action::ToggleValid);
    assert!(app.plane.valid_free);
    assert_eq!(app.valid_at(), before);
    // At 80 columns the beliefs title says where the plane went; p shows it whole.
    let (mut app, screen) = screen_after((80, 30), &[]);
    assert!(screen.contains("plane: Tab to it, or p"), "{screen}");
    app.update(Action::PlaneFull);
    let full = text(&draw(&app));
    assert!(
        full.contains("Plane · root-cause · triage") && !full.contains("Beliefs held at"),
        "{full}"
    );
    app.update(Action::Back);
    assert!(text(&draw(&app)).contains("Beliefs held at"));
}

#[test]
fn prompts_edit_their_text_and_q_types() {
    let mut app = snapshot_app((120, 40));
    app.update(Action::FocusNext);
    app.update(Action::Filter);
    let q = ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Char('q'),
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
    let action = asof_tui::tui::keymap::translate(&q, app.context()).unwrap();
    assert_eq!(action, Action::Type('q'));
    app.update(action);
    assert!(!app.quit);
    let footer = text(&draw(&app));
    assert!(
        footer.contains("Enter apply") && !footer.contains("Esc/q"),
        "{footer}"
    );
}

#[test]
fn the_evidence_list_opens_on_what_is_known_with_no_blank_rows() {
    for cursor in [
        "2026-03-02T09:15:00Z",
        "2026-03-03T12:10:00Z",
        "2026-03-16T16:00:00Z",
    ] {
        let mut app = demo(false, (120, 40));
        app.seek(at(cursor));
        let rows = app.list_rows().1;
        let list = &app.evidence.list;
        let shown = list.window(rows).count();
        assert_eq!(shown, rows.min(list.len()), "no blank rows at {cursor}");
        let known = asof_tui::tui::state::evidence::EvidenceState::known(&app.timeline, app.cursor);
        assert_eq!(
            list.selected(),
            known.saturating_sub(1),
            "the latest known at {cursor}"
        );
        if known <= rows {
            assert_eq!(list.offset(), 0, "top-aligned at {cursor}");
        }
    }
}

#[test]
fn popups_snapshot_scrolled() {
    let (_, help) = screen_after((80, 24), &[Action::Help, Action::PageDown]);
    insta::assert_snapshot!("help_80x24_page_2", help);
    let (_, details) = screen_after((80, 24), &[Action::FocusPrev, Action::Open, Action::Down]);
    insta::assert_snapshot!("evidence_details_80x24", details);
}

#[test]
fn the_version_popup_snapshot() {
    let mut app = snapshot_app((80, 24));
    app.update(Action::FocusNext);
    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Plane);
    app.update(Action::Open);
    let screen = text(&draw(&app));
    assert!(screen.contains("Version B19"), "{screen}");
    insta::assert_snapshot!("version_80x24", screen);
}

/// `m` makes a review finding (docs/review.md) on the selected evidence: a
/// verdict and a note, made now (the wall clock) about the cursor's instant,
/// appended to the review file — and shown in a REVIEW column of its own,
/// while VERIFIED and the beliefs' support stay what the agent's log said.
/// A finding before its evidence was recorded, or without a review file, is
/// refused with a message.
#[test]
fn m_makes_a_finding_made_now_about_the_cursor_kept_apart_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let review = dir.path().join("demo.review.jsonl");
    let mut app = demo(false, (160, 45));
    app.update(Action::Mark);
    assert!(app.popup.is_none());
    assert!(
        app.status
            .as_deref()
            .unwrap_or("")
            .contains("needs a review file")
    );
    app.review = Some(review.clone());
    app.reviewer = Some("ana".into());
    app.seek(at("2026-03-03T12:10:00Z"));
    while app.focus != asof_tui::tui::app::Focus::Evidence {
        app.update(Action::FocusNext);
    }
    // E24 is recorded on 03-05: not yet.
    select_evidence(&mut app, "E24");
    app.update(Action::Mark);
    assert!(app.popup.is_none());
    assert!(
        app.status
            .as_deref()
            .unwrap_or("")
            .contains("after the cursor"),
        "{:?}",
        app.status
    );
    select_evidence(&mut app, "E15");
    app.update(Action::Mark);
    assert!(app.popup.is_some(), "the finding prompt opens");
    // The prompt names its target: the item, its kind and source, the instant.
    let prompt = text(&draw(&app));
    assert!(
        prompt.contains("Finding on E15 (metric, grafana) about 03-03 12:10, as:"),
        "{prompt}"
    );
    for c in "wrong".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    assert!(
        app.popup.is_some(),
        "a belief's verdict is not one for evidence: the prompt stays open"
    );
    assert!(!review.exists());
    for _ in 0.."wrong".len() {
        app.update(Action::Edit(asof_tui::tui::action::Edit::Backspace));
    }
    let before = asof_core::time::now();
    for c in "rej a traffic lull, not the rollback".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    let after = asof_core::time::now();
    assert!(app.popup.is_none(), "{:?}", app.popup);
    let written = std::fs::read_to_string(&review).unwrap();
    let line: serde_json::Value = serde_json::from_str(written.trim()).unwrap();
    assert_eq!(line["id"], "F1");
    assert_eq!(
        line["target"],
        serde_json::json!({"kind": "evidence", "id": "E15"})
    );
    assert_eq!(line["verdict"], "rejected");
    assert_eq!(line["note"], "a traffic lull, not the rollback");
    assert_eq!(line["reviewer"], "ana");
    // About the cursor's instant; made at the wall clock, not the cursor.
    assert_eq!(line["about"], "2026-03-03T12:10:00Z");
    let made = parse(line["made_at"].as_str().unwrap()).unwrap();
    assert!(
        before <= made && made <= after,
        "{made} not in [{before}, {after}]"
    );
    let status = app.status.clone().unwrap_or_default();
    assert!(status.contains("F1 E15 rejected"), "{status}");
    assert!(
        status.contains("the agent's record is unchanged"),
        "{status}"
    );
    // The view: REVIEW says the verdict with its glyph; VERIFIED is still the agent's.
    let screen = text(&draw(&app));
    assert!(screen.contains("REVIEW"), "{screen}");
    let e15 = screen.lines().find(|l| l.contains("│E15 ")).unwrap();
    assert!(e15.contains("candidate"), "{e15}");
    assert!(e15.contains("⚑ rejected"), "{e15}");
    assert_eq!(
        app.timeline.ledger.state("E15", app.cursor),
        asof_core::model::VerifyState::Candidate
    );
    // B19 (on E15) keeps its support: the review judges it, it does not change it.
    let row = app
        .beliefs
        .rows
        .iter()
        .find(|r| {
            r.belief
                .is_some_and(|i| &*app.timeline.belief(i).version.assertion == "B19")
        })
        .unwrap();
    assert_eq!(
        row.quality.unwrap().support,
        asof_core::engine::quality::Support::Ok
    );
    // The header says a review is read, from the first frame on.
    assert!(screen.contains("⚑ review: "), "{screen}");
    assert!(screen.contains("1 finding by ana"), "{screen}");

    // A finding on a belief: the beliefs panel's selection, a belief's verdicts.
    while app.focus != asof_tui::tui::app::Focus::Beliefs {
        app.update(Action::FocusNext);
    }
    while app
        .beliefs
        .selected()
        .and_then(|r| r.belief)
        .is_none_or(|i| &*app.timeline.belief(i).version.assertion != "B19")
    {
        let before = app.beliefs.list.selected();
        app.update(Action::Down);
        assert_ne!(before, app.beliefs.list.selected(), "B19 is listed");
    }
    app.update(Action::Mark);
    let prompt = text(&draw(&app));
    assert!(
        prompt.contains("Finding on B19: triage · root-cause"),
        "{prompt}"
    );
    assert!(
        prompt.contains("right|wrong|unsupported|misleading|note"),
        "{prompt}"
    );
    for c in "mis rested on a lull".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    assert!(app.popup.is_none(), "{:?}", app.popup);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&review)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["id"], "F2");
    assert_eq!(
        lines[1]["target"],
        serde_json::json!({"kind": "version", "id": "B19", "agent": "triage", "topic": "root-cause"})
    );
    assert_eq!(lines[1]["verdict"], "misleading");
    let screen = text(&draw(&app));
    assert!(screen.contains("⚑ misleading"), "{screen}");

    // `e`'s report carries the findings; `W` forks without what the review rejected.
    app.update(Action::Export);
    for c in "md".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    let report = app.take_export_request().expect("a report asked for");
    let shown = report.review.expect("the review goes with the report");
    assert_eq!(shown.findings.len(), 2);
    app.update(Action::ForkReview);
    let request = app.take_fork_request().expect("a fork asked for");
    assert_eq!(request.evidence, vec!["E15".to_owned()]);
    assert_eq!(request.rejected[0].verification, "F1");
    assert!(
        request
            .review
            .as_deref()
            .unwrap_or("")
            .contains("demo.review.jsonl")
    );
    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let made =
        asof_tui::tui::fork_worker::run_fork_for(&log, &parent, "demo", "", &request).unwrap();
    assert!(
        made.timeline.label.contains("what review ") && made.timeline.label.contains("rejected"),
        "{}",
        made.timeline.label
    );
    assert_eq!(
        made.report.review, request.review,
        "the lineage names the review"
    );
    assert_eq!(made.report.removed, vec!["E15".to_owned()]);

    // The bundled demo is unchanged: a fresh view has no review.
    let fresh = Timeline::load(source::demo().unwrap()).unwrap();
    assert!(fresh.review.findings.is_empty());
    assert_eq!(
        fresh.ledger.state("E15", at("2026-03-03T12:10:00Z")),
        asof_core::model::VerifyState::Candidate
    );
}

/// Quality and conflict notes are worked out as rows come on screen: every
/// row, reached by scrolling a short panel, carries what the ledger says.
#[test]
fn rows_scrolled_into_view_carry_their_quality_and_conflicts() {
    let mut app = demo(false, (80, 24));
    app.seek(at("2026-03-04T09:00:00Z"));
    while app.focus != asof_tui::tui::app::Focus::Beliefs {
        app.update(Action::FocusNext);
    }
    let t = app.cursor;
    let mut seen = std::collections::HashSet::new();
    let mut conflicts = 0;
    for _ in 0..app.beliefs.rows.len() + 2 {
        let row = app.beliefs.selected().unwrap().clone();
        seen.insert((row.topic, row.version));
        match (&row.kind, row.belief) {
            (BeliefRowKind::Held, Some(i)) => {
                let b = app.timeline.belief(i);
                assert_eq!(
                    row.quality,
                    Some(app.timeline.ledger.quality(&b.version, &b.supported_by, t)),
                    "{}",
                    b.version.assertion
                );
            }
            (BeliefRowKind::Topic { conflict }, _) => {
                let topic = &app.timeline.header.topics[row.topic];
                let held = app.timeline.beliefs(&app.timeline.held(t));
                let held: Vec<_> = held
                    .iter()
                    .filter(|b| *b.version.topic == *topic.id)
                    .map(|b| (&b.version, &b.supported_by[..]))
                    .collect();
                let answer = asof_core::engine::quality::answer(
                    &app.timeline.ledger,
                    held,
                    topic.cardinality,
                    t,
                    None,
                );
                let want = answer.status == asof_core::engine::quality::AnswerStatus::Conflicted;
                assert_eq!(*conflict, want, "{}", topic.id);
                assert_eq!(
                    row.note.text.starts_with("⚠ conflicted"),
                    want,
                    "{}",
                    row.note.text
                );
                conflicts += usize::from(want);
            }
            _ => {}
        }
        app.update(Action::Down);
    }
    assert!(seen.len() > 10, "the walk went past the first screen");
    assert!(
        conflicts > 0,
        "the demo disagrees on a topic at 03-04 09:00"
    );
}

/// The TUI reading a store's scrub index shows the same screens as one whose
/// index is computed afresh with a checkpoint every three versions (so every
/// held set comes through checkpoints): at every event of the demo and of a
/// generated log, with the beliefs list walked at a few of them.
#[test]
fn screens_are_the_same_with_stored_and_with_short_checkpoints() {
    let stores: [fn() -> asof_store::store::Store; 2] = [
        || source::demo().unwrap(),
        || {
            let mut jsonl = Vec::new();
            let config = asof_synth::GenConfig {
                events: 600,
                topics: 5,
                agents: 2,
                seed: 3,
            };
            asof_synth::generate(config, &mut jsonl).unwrap();
            let text = String::from_utf8(jsonl).unwrap();
            let log =
                asof_core::dataset::read_str("gen.jsonl", asof_core::dataset::Format::Jsonl, &text)
                    .unwrap()
                    .dataset;
            let replay = asof_core::engine::replay(&log.header, &log.events);
            asof_store::store::Store::in_memory("gen", &log, &replay).unwrap()
        },
    ];
    for open in stores {
        let theme = Theme { color: false };
        let mut stored = App::new(Timeline::load(open()).unwrap(), theme, (120, 40));
        let short = Timeline::load_computing_index(open(), 3).unwrap();
        let mut short = App::new(short, Theme { color: false }, (120, 40));
        stored.update(Action::Start);
        short.update(Action::Start);
        let mut screens = 0;
        loop {
            assert_eq!(
                text(&draw(&stored)),
                text(&draw(&short)),
                "at {}",
                stored.cursor
            );
            screens += 1;
            if screens % 25 == 0 {
                for app in [&mut stored, &mut short] {
                    app.focus = Focus::Beliefs;
                    for _ in 0..4 {
                        app.update(Action::Down);
                    }
                    app.update(Action::Open);
                }
                assert_eq!(
                    text(&draw(&stored)),
                    text(&draw(&short)),
                    "history at {}",
                    stored.cursor
                );
                for app in [&mut stored, &mut short] {
                    app.update(Action::Back);
                    app.focus = Focus::Scrubber;
                }
            }
            let before = stored.cursor;
            stored.update(Action::NextEvent);
            short.update(Action::NextEvent);
            if stored.cursor == before {
                break;
            }
        }
        assert!(screens > 40, "{screens} screens");
    }
}

/// The demo's first `n` events in recorded order, as the TUI reads a store a
/// follow has written so far.
fn demo_prefix(n: usize) -> Timeline {
    let mut log = demo_log();
    log.events.sort_by_key(|e| e.recorded_at());
    log.events.truncate(n);
    let replay = asof_core::engine::replay(&log.header, &log.events);
    Timeline::load(asof_store::store::Store::in_memory("live", &log, &replay).unwrap()).unwrap()
}

/// design.md §6: a refresh moves a cursor at the newest event on to the new
/// newest, leaves one the user moved back where it is (End follows again),
/// and keeps the beliefs' and the evidence list's selections.
#[test]
fn a_live_refresh_follows_at_the_end_pins_when_scrubbed_back_and_keeps_selections() {
    use asof_tui::tui::live::Live;
    let mut app = App::new(demo_prefix(40), Theme { color: false }, (120, 40));
    app.go_live();
    let newest = |t: &Timeline| t.span().unwrap().1;
    assert_eq!(app.cursor, newest(&app.timeline));
    assert!(text(&draw(&app)).contains("● live · newest"));

    // At the end: the cursor follows.
    assert!(app.live_news(Live::Refreshed(Box::new(demo_prefix(55)))));
    assert_eq!(app.cursor, newest(&demo_prefix(55)));
    assert_eq!(app.event_position.1, 55);

    // Scrubbed back with a belief and an evidence item selected: pinned.
    app.seek(at("2026-03-02T09:20:00Z"));
    app.update(Action::FocusNext);
    assert_eq!(app.focus, Focus::Beliefs);
    app.update(Action::Down);
    let belief = selected_claim;
    assert_eq!(belief(&app), "Payments DB primary overloaded");
    app.update(Action::FocusNext);
    select_evidence(&mut app, "E2");
    let pinned = app.cursor;
    app.live_news(Live::Refreshed(Box::new(demo_prefix(70))));
    assert_eq!(app.cursor, pinned, "a cursor moved back stays");
    assert_eq!(app.event_position.1, 70, "the new events are counted");
    assert_eq!(belief(&app), "Payments DB primary overloaded");
    let evidence = app
        .evidence
        .list
        .selected_item()
        .map(|i| app.timeline.evidence_item(i).evidence.id.clone());
    assert_eq!(evidence.as_deref(), Some("E2"));
    let screen = text(&draw(&app));
    assert!(screen.contains("● live · pinned, End follows"), "{screen}");

    // End: following again, through the next refresh.
    app.update(Action::End);
    app.live_news(Live::Refreshed(Box::new(demo_prefix(85))));
    assert_eq!(app.cursor, newest(&demo_prefix(85)));
    assert!(!text(&draw(&app)).contains("pinned"));

    // A stop keeps the screen and says why.
    app.live_news(Live::Stopped("run.jsonl was truncated".to_owned()));
    assert_eq!(app.event_position.1, 85);
    let screen = text(&draw(&app));
    assert!(screen.contains("○ follow stopped"), "{screen}");
    assert!(screen.contains("run.jsonl was truncated"), "{screen}");
}

/// `y` copies the selected row as text: the loop hands the OSC 52 sequence of
/// exactly that text to the terminal, and the status line says so.
#[test]
fn y_copies_the_selected_row_through_osc_52() {
    use asof_tui::tui::app::copy::osc52;
    use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    let mut app = demo(false, (120, 40));
    app.seek(at("2026-03-03T12:00:00Z"));
    // The evidence panel, its first item at the cursor.
    while app.focus != Focus::Evidence {
        app.update(Action::FocusNext);
    }
    app.update(Action::Top);
    let (tx, rx) = std::sync::mpsc::channel();
    let key = |c| {
        asof_tui::tui::Msg::Input(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )))
    };
    tx.send(key('y')).unwrap();
    drop(tx);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let playing = std::sync::atomic::AtomicBool::new(false);
    let mut sent = Vec::new();
    asof_tui::tui::run_loop(&mut terminal, &mut app, &rx, &playing, &mut |effect| {
        if let asof_tui::tui::Effect::Copy(text) = effect {
            sent.push(osc52(&text))
        }
    })
    .unwrap();
    assert_eq!(sent.len(), 1, "one copy");
    let item = app
        .timeline
        .evidence_item(app.evidence.list.selected_item().unwrap());
    let e = &item.evidence;
    assert!(sent[0].starts_with("\x1b]52;c;") && sent[0].ends_with('\x07'));
    let copied = format!(
        "{} · {} from {} · observed {} · recorded {}",
        e.id,
        e.kind,
        e.source,
        asof_core::time::format(e.observed_at),
        asof_core::time::format(e.recorded_at)
    );
    // What the sequence carries is that row's text.
    let mut app2 = demo(false, (120, 40));
    app2.seek(at("2026-03-03T12:00:00Z"));
    while app2.focus != Focus::Evidence {
        app2.update(Action::FocusNext);
    }
    app2.update(Action::Top);
    app2.update(Action::Copy);
    let text = app2.take_clipboard().expect("y set the clipboard");
    assert!(text.starts_with(&copied), "{text}");
    assert!(text.ends_with(&e.summary), "{text}");
    assert_eq!(sent[0], osc52(&text));
    assert!(self::text(&draw(&app)).contains("copied to the clipboard (OSC 52)"));

    // A belief row copies its version; nothing selected says so.
    while app2.focus != Focus::Beliefs {
        app2.update(Action::FocusNext);
    }
    app2.update(Action::Top);
    app2.update(Action::Down);
    app2.update(Action::Copy);
    let belief = app2.take_clipboard().expect("a belief row copies");
    assert!(
        belief.contains(" believed “") && belief.contains("· valid ["),
        "{belief}"
    );
}

/// `s` saves the what-if fork as a store: the loop hands out where from and
/// where to, and the saved file is a store that passes `asof check` and
/// holds the fork's lineage.
#[test]
fn s_saves_the_fork_as_a_store_that_passes_check() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo(false, (120, 40));
    app.update(Action::SaveFork);
    assert!(
        app.status
            .as_deref()
            .unwrap_or("")
            .contains("no fork to save yet")
    );
    let log = source::demo().unwrap().log().unwrap();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    app.fork_finished(asof_tui::tui::fork_worker::run_fork(
        &log, &parent, "demo", "", "E15",
    ));
    app.update(Action::Back);
    let (tx, rx) = std::sync::mpsc::channel();
    tx.send(asof_tui::tui::Msg::Input(
        ratatui::crossterm::event::Event::Key(ratatui::crossterm::event::KeyEvent::new(
            ratatui::crossterm::event::KeyCode::Char('s'),
            ratatui::crossterm::event::KeyModifiers::NONE,
        )),
    ))
    .unwrap();
    drop(tx);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let playing = std::sync::atomic::AtomicBool::new(false);
    let mut asked = Vec::new();
    asof_tui::tui::run_loop(&mut terminal, &mut app, &rx, &playing, &mut |effect| {
        asked.push(effect)
    })
    .unwrap();
    let [asof_tui::tui::Effect::SaveFork { fork, to }] = asked.as_slice() else {
        panic!("one save asked: {asked:?}");
    };
    // Named as `asof fork` names it (numbered on if that file exists here).
    let name = to.to_string_lossy().into_owned();
    assert!(
        name.starts_with("payment-outage-without-E15") && name.ends_with(".db"),
        "{name}"
    );
    assert!(!to.exists());
    assert!(text(&draw(&app)).contains(&format!("saving the what-if fork to {name}")));
    // The worker's part, into a directory of the test's own.
    let saved = dir.path().join("saved.db");
    asof_tui::tui::fork_worker::save_fork(fork, &saved).unwrap();
    app.fork_saved(Ok(saved.clone()));
    assert!(text(&draw(&app)).contains("saved the what-if fork as"));
    let check = asof_store::store::Store::open(&saved)
        .unwrap()
        .check()
        .unwrap();
    assert!(check.differences.is_empty(), "{:?}", check.differences);
    let store = asof_store::store::Store::open(&saved).unwrap();
    assert!(
        store.meta("fork_report").unwrap().is_some(),
        "the lineage is kept"
    );
    // Saving over an existing file is refused, and leaves it as it was.
    let before = std::fs::read(&saved).unwrap();
    assert!(asof_tui::tui::fork_worker::save_fork(fork, &saved).is_err());
    assert_eq!(std::fs::read(&saved).unwrap(), before);
}

/// `e` asks md or html in a prompt (html offered), and the report of what is
/// shown is written where the status line says; a fork shown writes the
/// fork's report.
#[test]
fn e_writes_the_report_of_what_is_shown() {
    use asof_tui::tui::action::Edit;
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo(false, (120, 40));
    app.update(Action::Export);
    let screen = text(&draw(&app));
    assert!(
        screen.contains("Write the report of what is shown: md or html, then a file name"),
        "{screen}"
    );
    app.update(Action::Open);
    let report = app
        .take_export_request()
        .expect("Enter asks for the report");
    assert_eq!(report.fork, None);
    assert!(report.html);
    assert_eq!(
        report.to,
        std::path::Path::new("payment-outage.report.html")
    );
    assert!(text(&draw(&app)).contains("writing the report to payment-outage.report.html"));
    let html = dir.path().join("r.html");
    let demo_store = source::demo().unwrap();
    let prov =
        asof_tui::tui::report_provenance(&demo_store, source::origin(None).unwrap(), None).unwrap();
    asof_tui::tui::write_report(&demo_store, true, &html, &prov).unwrap();
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains(r#"<input id="step" type="range""#)
    );
    app.report_written(Ok(html.clone()));
    assert!(text(&draw(&app)).contains("wrote the report to"));

    // Markdown, to a named file; a word that is neither is refused in place.
    let md = dir.path().join("r.md");
    app.update(Action::Export);
    for _ in 0..4 {
        app.update(Action::Edit(Edit::Backspace));
    }
    for c in "pdf".chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    assert!(app.take_export_request().is_none());
    assert!(text(&draw(&app)).contains("write md or html"));
    for _ in 0..3 {
        app.update(Action::Edit(Edit::Backspace));
    }
    for c in format!("md {}", md.display()).chars() {
        app.update(Action::Type(c));
    }
    app.update(Action::Open);
    let report = app.take_export_request().expect("md with a file");
    assert!(!report.html);
    assert_eq!(report.to, md);

    // With the fork in the panels, the fork's store is the one reported.
    let log = source::demo().unwrap().log().unwrap();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let origin = source::origin(None).unwrap();
    app.fork_finished(asof_tui::tui::fork_worker::run_fork(
        &log,
        &parent,
        &origin.name,
        &origin.sha256,
        "E15",
    ));
    app.update(Action::Back);
    app.update(Action::Compare);
    app.update(Action::Compare);
    app.update(Action::Export);
    app.update(Action::Open);
    let report = app.take_export_request().expect("the fork's report");
    let fork = report.fork.expect("of the fork's store");
    assert!(
        report
            .to
            .to_string_lossy()
            .contains("-without-E15.report.html"),
        "{:?}",
        report.to
    );
    // It says it is a what-if, with the lineage `asof fork` writes and its
    // divergence from the record, and never names the temporary store.
    let store = asof_store::store::Store::open(&fork).unwrap();
    let demo_store = source::demo().unwrap();
    let prov = asof_tui::tui::report_provenance(&store, origin.clone(), Some((&fork, &demo_store)))
        .unwrap();
    asof_tui::tui::write_report(&store, false, &md, &prov).unwrap();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# What-if: Audit report"), "{text}");
    assert!(text.contains(
        "WHAT-IF — replay of payment-outage.yaml (bundled demo) without E15 (policy asof-fork/1), not the record"
    ));
    assert!(
        text.contains(&origin.sha256),
        "the demo's SHA-256 in the lineage"
    );
    assert!(text.contains("### Where the answers diverge"), "{text}");
    let temp = fork.parent().unwrap().to_string_lossy().into_owned();
    assert!(
        !text.contains(&temp),
        "a temporary path in the report: {temp}"
    );
}

/// Every event id of a timeline (evidence, assertions, retractions,
/// verifications) and every instant at which something was recorded.
fn ids_and_instants(timeline: &Timeline) -> (std::collections::HashSet<String>, Vec<i64>) {
    let mut ids = std::collections::HashSet::new();
    let mut instants = Vec::new();
    let Some((first, _)) = timeline.span() else {
        return (ids, instants);
    };
    let mut t = Some(first);
    while let Some(at) = t {
        for m in timeline.marks_at(at) {
            ids.insert(m.id.clone());
            ids.extend(m.cites.iter().map(|c| c.to_string()));
        }
        instants.push(at);
        t = timeline.next_event(at);
    }
    (ids, instants)
}

/// The maximal runs of id characters in `line`, each with the character after it.
fn tokens(line: &str) -> Vec<(String, Option<char>)> {
    let is_id = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_id(chars[i]) {
            let start = i;
            while i < chars.len() && is_id(chars[i]) {
                i += 1;
            }
            out.push((chars[start..i].iter().collect(), chars.get(i).copied()));
        } else {
            i += 1;
        }
    }
    out
}

/// An auditor copies ids off the screen: on every belief row, at every
/// width from 60 to 220 columns and at every event of the demo and of the
/// imported sre-agent trace, each id shown is one the row's belief cites or
/// names (its assertion, what closed, clipped or reconfirmed it) — never a
/// cut id, which would name another item (`E1` for `E15`).
#[test]
fn every_id_on_a_belief_row_is_whole_and_the_rows_own() {
    for source in ["demo", "datasets/sre-agent.otlp.jsonl"] {
        let open = || match source {
            "demo" => Timeline::load(source::demo().unwrap()).unwrap(),
            path => {
                Timeline::load(source::open(Some(std::path::Path::new(path))).unwrap()).unwrap()
            }
        };
        let (ids, instants) = ids_and_instants(&open());
        assert!(ids.len() > 10 && instants.len() > 10, "{source}");
        let mut rows_checked = 0;
        for width in (60..=220).step_by(8) {
            let mut app = App::new(open(), Theme { color: false }, (width, 40));
            for &t in &instants {
                app.seek(t);
                let buffer = draw(&app);
                let screen: Vec<String> = text(&buffer).lines().map(str::to_owned).collect();
                let areas = app.areas();
                let Some(area) = areas.beliefs else { continue };
                let rows = asof_tui::tui::layout::belief_rows(area);
                let window: Vec<usize> = app
                    .beliefs
                    .list
                    .window(rows.height as usize)
                    .map(|(_, i)| i)
                    .collect();
                for (n, i) in window.into_iter().enumerate() {
                    let row = &app.beliefs.rows[i];
                    let Some(b) = row.belief.map(|i| app.timeline.belief(i)) else {
                        continue;
                    };
                    let v = &b.version;
                    let mut allowed: std::collections::HashSet<String> =
                        b.supported_by.iter().map(|e| e.to_string()).collect();
                    allowed.insert(v.assertion.to_string());
                    allowed.extend(v.clipped_by.iter().map(|c| c.to_string()));
                    allowed.extend(tokens(&row.note.text).into_iter().map(|(t, _)| t));
                    if let Some(c) = &v.closed {
                        allowed.extend(tokens(&c.to_string()).into_iter().map(|(t, _)| t));
                    }
                    let line: String = screen[(rows.y as usize) + n]
                        .chars()
                        .skip(rows.x as usize)
                        .take(rows.width as usize)
                        .collect();
                    for (token, next) in tokens(&line) {
                        if ids.contains(&token) {
                            assert!(
                                allowed.contains(&token),
                                "{source} at {width} columns, {}: `{token}` on the row of {} names an item it does not cite\n{line}",
                                asof_core::time::format(t),
                                v.claim
                            );
                        } else {
                            let prefix = ids.iter().any(|id| id.starts_with(&token));
                            assert!(
                                !(prefix
                                    && (next == Some('…')
                                        || token.chars().any(|c| c.is_ascii_digit()))),
                                "{source} at {width} columns: `{token}` is a cut id\n{line}"
                            );
                        }
                    }
                    rows_checked += 1;
                }
            }
        }
        assert!(
            rows_checked > 300,
            "{source}: only {rows_checked} rows read"
        );
    }
}

/// At 80×24 the footer keeps `? help` and `q quit` whatever is focused, and
/// the header keeps the cursor's instant and the play state whole.
#[test]
fn the_80x24_footer_keeps_help_and_quit_in_every_focus() {
    let mut app = demo(false, (80, 24));
    app.seek(at("2026-03-03T12:10:00Z"));
    for _ in 0..4 {
        let screen = text(&draw(&app));
        let footer = screen.lines().nth(23).unwrap_or("");
        assert!(
            footer.contains("? help") && footer.contains("q quit"),
            "{:?}: {footer}",
            app.focus
        );
        let header = screen.lines().next().unwrap_or("");
        assert!(
            header.contains("recorded ▸ 2026-03-03T12:10:00Z") && header.contains("⏸ paused"),
            "{header}"
        );
        app.update(Action::FocusNext);
    }
}

/// At 80×24 the compare view's lines are wider than the screen: ←/→ scroll
/// it sideways, and scrolled to the right its last columns read whole.
#[test]
fn the_compare_view_scrolls_sideways_to_its_last_column() {
    let mut app = demo(false, (80, 24));
    let log = source::demo().unwrap().log().unwrap();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    app.fork_finished(asof_tui::tui::fork_worker::run_fork(
        &log, &parent, "demo", "", "E15",
    ));
    assert!(
        matches!(app.popup, Some(Popup::Compare(_))),
        "{:?}",
        app.popup
    );
    for _ in 0..6 {
        app.update(Action::Down);
    }
    let before = text(&draw(&app));
    assert!(!before.contains("◆ Bad deploy"), "{before}");
    for _ in 0..40 {
        app.update(Action::ScrollRight);
    }
    let after = text(&draw(&app));
    assert!(after.contains("◆ Bad deploy"), "{after}");
    // Scrolling stops at the widest line: the first ← moves back at once.
    app.update(Action::ScrollLeft);
    assert_ne!(
        text(&draw(&app)),
        after,
        "← after the last column moves back"
    );
    for _ in 0..40 {
        app.update(Action::ScrollLeft);
    }
    assert_eq!(text(&draw(&app)), before, "back to the first column");
}

/// The plane reads without a manual: at 60×24 and 80×24 (full-screen, `p`),
/// 120×40 and 200×60, at three instants of the demo and on the sre-agent
/// trace, every claim glyph drawn is named in the legend (on one of its pages,
/// turned with `n`, when it does not fit at once), the crosshair's row is labelled
/// with the cursor's own instant, and the valid axis carries dates when it
/// spans more than a day.
#[test]
fn the_plane_legend_names_every_glyph_drawn_and_the_crosshair_its_instant() {
    let glyphs: Vec<&str> = (0..8).map(asof_tui::tui::theme::claim_glyph).collect();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "demo",
            vec![
                "2026-03-02T12:00:00Z",
                "2026-03-03T12:10:00Z",
                "2026-03-16T10:10:00Z",
            ],
        ),
        ("datasets/sre-agent.otlp.jsonl", vec![]),
    ];
    let mut checked = 0;
    let mut paged = false;
    for (source_name, instants) in cases {
        // 60×24: the legend no longer fits at once and turns pages.
        for size in [(60u16, 24u16), (80, 24), (120, 40), (200, 60)] {
            let timeline = match source_name {
                "demo" => Timeline::load(source::demo().unwrap()).unwrap(),
                path => {
                    Timeline::load(source::open(Some(std::path::Path::new(path))).unwrap()).unwrap()
                }
            };
            let mut app = App::new(timeline, Theme { color: false }, size);
            if size.0 < 100 {
                app.update(Action::PlaneFull);
            }
            let instants: Vec<i64> = if instants.is_empty() {
                vec![app.cursor]
            } else {
                instants.iter().map(|t| at(t)).collect()
            };
            for t in instants {
                app.seek(t);
                let screen: Vec<String> = text(&draw(&app)).lines().map(str::to_owned).collect();
                let area = app.areas().plane.expect("the plane is on screen");
                let grid = asof_tui::tui::layout::plane_grid(area);
                let inner = asof_tui::tui::layout::inner(area);
                let row = |y: u16, x0: u16, w: u16| -> String {
                    screen[y as usize]
                        .chars()
                        .skip(x0 as usize)
                        .take(w as usize)
                        .collect()
                };
                let drawn: Vec<&str> = glyphs
                    .iter()
                    .copied()
                    .filter(|g| {
                        (grid.y..grid.bottom()).any(|y| row(y, grid.x, grid.width).contains(g))
                    })
                    .collect();
                assert!(!drawn.is_empty(), "{source_name} {size:?}: nothing drawn");
                let legend_of = |app: &App| -> String {
                    let screen: Vec<String> = text(&draw(app)).lines().map(str::to_owned).collect();
                    (inner.bottom() - 2..inner.bottom())
                        .map(|y| {
                            screen[y as usize]
                                .chars()
                                .skip(inner.x as usize)
                                .take(inner.width as usize)
                                .collect::<String>()
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                // The legend as a whole: every page `n` turns to, when it
                // says it has pages (`n ▸ 1/3`).
                let mut legend = legend_of(&app);
                if let Some(pages) = legend
                    .split_once("n ▸ 1/")
                    .and_then(|(_, n)| n.split_whitespace().next())
                    .and_then(|n| n.parse::<usize>().ok())
                {
                    paged = true;
                    for page in 2..=pages {
                        app.update(Action::PlaneLegend);
                        let next = legend_of(&app);
                        assert!(next.contains(&format!("n ▸ {page}/{pages}")), "{next}");
                        legend.push_str(&next);
                    }
                    app.update(Action::PlaneLegend);
                    assert!(legend_of(&app).contains(&format!("n ▸ 1/{pages}")));
                }
                let missing: Vec<&&str> = drawn
                    .iter()
                    .filter(|g| !legend.contains(&format!("{g} ")))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "{source_name} {size:?}: {missing:?} drawn but not in the legend: {legend}"
                );
                // The cursor's instant whole; on a narrow label column its
                // clock time alone (the date then is the axis's one day).
                let label = asof_core::time::format_short(app.cursor);
                let clock = label
                    .split_once(' ')
                    .map_or(label.clone(), |(_, c)| c.to_owned());
                assert!(
                    (grid.y..grid.bottom()).any(|y| {
                        let l = row(y, inner.x, grid.x - inner.x);
                        l.starts_with(&label) || l.starts_with(&format!("{clock} "))
                    }),
                    "{source_name} {size:?}: no row labelled {label}\n{}",
                    screen.join("\n")
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 16);
    assert!(paged, "no case turned the legend's pages");
}

/// A what-if of many removed items at 80×24: the badge names the ids it can
/// whole, counts the rest, and the cursor's instant stays whole beside it.
#[test]
fn a_long_what_if_badge_keeps_ids_whole_and_the_cursor_on_screen() {
    let mut app = demo(false, (80, 24));
    let log = source::demo().unwrap().log().unwrap();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let mut fork = asof_tui::tui::fork_worker::run_fork(&log, &parent, "demo", "", "E15").unwrap();
    fork.removed = (10..30)
        .map(|n| format!("E{n}"))
        .collect::<Vec<_>>()
        .join(",");
    app.fork_finished(Ok(fork));
    app.update(Action::Back);
    app.update(Action::Compare);
    app.update(Action::Compare);
    let header = text(&draw(&app)).lines().next().unwrap_or("").to_owned();
    assert!(header.contains("WHAT-IF without E10,E11"), "{header}");
    assert!(header.contains(" +"), "the rest is counted: {header}");
    assert!(
        header.contains("recorded ▸ 2026-03-16T10:10:00Z"),
        "{header}"
    );
}

/// Snapshots of the plane as a reviewer reads it: the demo at three cursor
/// instants and the 8-minute sre-agent run (its timeline zoomed to fit), at
/// 80×24 (full-screen, `p`), 120×40 and 200×60. Only the plane's box is kept,
/// so a change elsewhere on the screen does not churn these.
#[test]
fn plane_snapshots_at_three_sizes() {
    let cases: [(&str, &str, Option<&str>); 4] = [
        ("demo_03_02_1200", "demo", Some("2026-03-02T12:00:00Z")),
        ("demo_03_03_1210", "demo", Some("2026-03-03T12:10:00Z")),
        ("demo_03_16_1010", "demo", Some("2026-03-16T10:10:00Z")),
        ("sre_agent_end", "datasets/sre-agent.otlp.jsonl", None),
    ];
    for (name, source_name, instant) in cases {
        for size in [(80u16, 24u16), (120, 40), (200, 60)] {
            let timeline = match source_name {
                "demo" => Timeline::load(source::demo().unwrap()).unwrap(),
                path => {
                    Timeline::load(source::open(Some(std::path::Path::new(path))).unwrap()).unwrap()
                }
            };
            let mut app = App::new(timeline, Theme { color: false }, size);
            if size.0 < 100 {
                app.update(Action::PlaneFull);
            }
            if let Some(t) = instant {
                app.seek(at(t));
            }
            let area = app.areas().plane.expect("the plane is on screen");
            let plane: String = text(&draw(&app))
                .lines()
                .skip(area.y as usize)
                .take(area.height as usize)
                .map(|l| {
                    l.chars()
                        .skip(area.x as usize)
                        .take(area.width as usize)
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n");
            insta::assert_snapshot!(format!("plane_{name}_{}x{}", size.0, size.1), plane);
        }
    }
}

/// The evidence SUMMARY stays readable: at least 30 columns at 120×40 and at
/// least 20 at 80×24, with the INFLUENCE column shown; the columns that go
/// to make room (OBSERVED, SOURCE, then KIND and LAG) are in the details.
#[test]
fn the_evidence_summary_keeps_its_room_with_influence_shown() {
    let log = demo_log();
    let parent = asof_core::engine::replay(&log.header, &log.events);
    let influence = asof_store::fork::influence::influence(&log, &parent);
    for (size, least) in [((120u16, 40u16), 30usize), ((80, 24), 20)] {
        let mut app = snapshot_app(size);
        app.influence_ready(influence.clone());
        while app.focus != asof_tui::tui::app::Focus::Evidence {
            app.update(Action::FocusNext);
        }
        let screen = text(&draw(&app));
        let header = screen
            .lines()
            .find(|l| l.contains("ID ") && l.contains("SUMMARY"))
            .unwrap_or_else(|| panic!("{size:?}: no header with SUMMARY whole\n{screen}"));
        assert!(header.contains("INFLUENCE"), "{header}");
        let column = header
            .find("SUMMARY")
            .map_or(0, |b| header[..b].chars().count());
        let room = header.chars().count() - 1 - column;
        assert!(
            room >= least,
            "{size:?}: SUMMARY gets {room} columns\n{screen}"
        );
    }
}

/// SINCE is when the agent began holding the claim (design.md §8): a split piece
/// of B6 has B6's 03-02 10:30 as its SINCE, and its detail line says the row
/// itself was recorded at the split; E14's details give its lag from the end
/// of what it observed and from the start.
#[test]
fn a_split_rows_since_is_its_origin_and_the_detail_says_the_split() {
    let mut app = demo(false, (220, 50));
    app.seek(at("2026-03-03T13:00:00Z"));
    app.update(Action::FocusNext);
    let mut found = false;
    for _ in 0..20 {
        // The detail line wraps: read it as one text.
        let screen: String = text(&draw(&app))
            .lines()
            .map(|l| {
                let panel = l.split("││").next().unwrap_or_default();
                panel.trim_matches(|c| c == '│' || c == ' ').to_owned()
            })
            .collect::<Vec<_>>()
            .join(" ");
        if screen.contains("since 03-02 10:30 (this row recorded 03-03 12:15, a split)") {
            found = true;
            break;
        }
        app.update(Action::Down);
    }
    assert!(found, "{}", text(&draw(&app)));
    // The SINCE cell, where the row has room for it, says the same.
    let held: Vec<&str> = app.beliefs.cells.iter().map(|c| c.since.as_str()).collect();
    assert_eq!(
        held.iter().filter(|s| **s == "03-02 10:30").count(),
        2,
        "B6's version closed just now, and its split piece: {held:?}"
    );

    let mut app = demo(false, (120, 40));
    while app.focus != asof_tui::tui::app::Focus::Evidence {
        app.update(Action::FocusNext);
    }
    select_evidence(&mut app, "E14");
    app.update(Action::Open);
    let details = text(&draw(&app));
    assert!(
        details.contains(
            "lag          10m 0s from the end of the observed interval (1d 1h from its start)"
        ),
        "{details}"
    );
}

/// An imported trace's details in the TUI: an item's whole text below its
/// summary (the summary ending in `…`), and the evaluations the trace made of
/// an item and of an assertion, under a heading that says they are not
/// verifications.
#[test]
fn details_show_the_whole_text_and_the_traces_evaluations() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = |name: &str| source::root().join("tests/fixtures/otlp").join(name);
    let open = |trace: &str, rules: &str| {
        let db = dir.path().join(format!("{trace}.db"));
        source::import_otlp(&fixture(trace), &fixture(rules), &db);
        let store = asof_store::store::Store::open(&db).unwrap();
        App::new(
            Timeline::load(store).unwrap(),
            Theme { color: false },
            (120, 40),
        )
    };
    let details_of_last_item = |app: &mut App| {
        while app.focus != Focus::Evidence {
            app.update(Action::FocusNext);
        }
        app.update(Action::Bottom);
        app.update(Action::Open);
        let Some(Popup::Text(view)) = &app.popup else {
            panic!("details open")
        };
        view.lines
            .iter()
            .map(|l| l.text.to_string())
            .collect::<Vec<_>>()
    };
    let mut whole = open("whole.jsonl", "prose.rules.yaml");
    let lines = details_of_last_item(&mut whole);
    let heading = lines
        .iter()
        .position(|l| l.starts_with("What it held, whole ("))
        .expect("the whole text's heading");
    let note = lines
        .iter()
        .position(|l| l.starts_with("(the summary; what it held, whole"))
        .expect("the summary says it is one");
    assert!(lines[note - 1].ends_with('…'), "a cut summary ends in …");
    // Every line of the 30 KB result, in order, below the heading.
    assert_eq!(lines.len() - heading - 1, 361, "all 361 lines");
    assert!(lines.last().unwrap().contains("pod/adservice2-0"));

    let mut features = open("features.jsonl", "features.rules.yaml");
    let lines = details_of_last_item(&mut features);
    let at = lines
        .iter()
        .position(|l| l == "Evaluations in the trace (not verifications)")
        .expect("the evaluations' heading");
    assert_eq!(
        lines[at + 1],
        "relevance 0.9 “relevant” — The pod status answers the question asked."
    );
}

/// `asof tui A --compare B`: the compare view draws the two runs' lanes on
/// their clock, titled as two runs (never a what-if), with where they parted
/// and what each had seen; c (there is no fork to show) closes it.
#[test]
fn two_runs_open_in_the_compare_view() {
    use asof_core::engine::answers::answers_of;
    use asof_core::engine::compare::{Align, Maps, Run, compare};
    let a_log = demo_log();
    // B: the demo where the triage agent's 12:10 hypothesis is the certificate.
    let yaml = include_str!("../../../datasets/payment-outage.yaml").replace(
        "claim: \"Bad deploy of checkout-service v4.12\"",
        "claim: \"Expired TLS certificate on the card-network gateway\"",
    );
    let b_log = asof_core::dataset::read_str("b.yaml", asof_core::dataset::Format::Yaml, &yaml)
        .unwrap()
        .dataset;
    let answers = |log: &asof_core::model::Dataset| {
        answers_of(
            asof_core::engine::replay(&log.header, &log.events)
                .versions
                .iter(),
        )
    };
    let (a, b) = (
        Run::of(&a_log, answers(&a_log)),
        Run::of(&b_log, answers(&b_log)),
    );
    let compared = compare(
        &a,
        &b,
        Align::Absolute,
        &Maps::default(),
        &Default::default(),
    );
    let mut app = snapshot_app((200, 60));
    app.whatif.runs = Some(asof_tui::tui::compare_view::TwoRuns::of(
        "a.yaml", "b.yaml", &compared, &a, &b,
    ));
    app.update(Action::Compare);
    assert!(matches!(app.popup, Some(Popup::Compare(_))));
    let screen = text(&draw(&app));
    assert!(screen.contains("Two runs, aligned by absolute"), "{screen}");
    assert!(
        !screen.contains("What-if"),
        "two runs are not a what-if: {screen}"
    );
    assert!(screen.contains("A a.yaml · B b.yaml"), "{screen}");
    assert!(screen.contains("triage · root-cause"), "{screen}");
    assert!(
        screen.contains("  A      ") && screen.contains("  B      "),
        "{screen}"
    );
    assert!(
        screen.contains(
            "parted at: 2026-03-03T12:10:00Z: A Bad deploy of checkout-service v4.12 · B Expired TLS certificate on the card-network gateway"
        ),
        "{screen}"
    );
    assert!(
        screen.contains("A had seen, B had not (A's ids): none"),
        "{screen}"
    );
    app.update(Action::Compare);
    assert!(app.popup.is_none(), "c closes two runs' compare");
    assert!(app.whatif.fork.is_none());
}

/// `r` lists a trace's model calls as `asof calls` does; a store that is no
/// trace says it has none.
#[test]
fn r_lists_the_model_calls_of_a_trace() {
    let mut app = app_for("datasets/sre-agent.otlp.jsonl", (120, 40));
    app.update(Action::Calls);
    assert!(matches!(app.popup, Some(Popup::Text(_))));
    let screen = text(&draw(&app));
    assert!(screen.contains("13 model call(s) in order"), "{screen}");
    assert!(
        screen.contains("read new T1,T2  said -  called get_alerts→T3"),
        "{screen}"
    );
    let mut demo = app_for("datasets/payment-outage.yaml", (120, 40));
    demo.update(Action::Calls);
    assert!(demo.popup.is_none());
    assert!(
        demo.status
            .as_deref()
            .unwrap_or_default()
            .contains("no model calls")
    );
}

/// A store with nothing in it yet (a receiver's before its first request)
/// draws with panels that say so: no "nothing matches the filter" when no
/// filter is typed.
#[test]
fn an_empty_store_says_it_holds_nothing_yet() {
    let header =
        r#"{"asof":1,"incident":{"id":"live","title":"Agent run (live)"},"agents":[],"topics":[]}"#;
    let parsed = asof_core::dataset::read_str(
        "live.jsonl",
        asof_core::dataset::Format::Jsonl,
        &format!("{header}\n"),
    )
    .unwrap();
    let replay = asof_core::engine::replay(&parsed.dataset.header, &parsed.dataset.events);
    let store = asof_store::store::Store::in_memory("live.db", &parsed.dataset, &replay).unwrap();
    let app = App::new(
        Timeline::load(store).unwrap(),
        Theme { color: false },
        (100, 30),
    );
    let screen = text(&draw(&app));
    assert!(
        screen.contains("no topics yet: no belief is recorded"),
        "{screen}"
    );
    assert!(screen.contains("no evidence recorded yet"), "{screen}");
    assert!(!screen.contains("nothing matches the filter"), "{screen}");
}

/// A live store behind the file it follows (a receiver's archive under
/// load) says so in the header, in the warning style; caught up, the line
/// is the plain live one again.
#[test]
fn a_live_store_behind_its_file_says_so_in_the_header() {
    use asof_tui::tui::live::Live;
    let mut app = demo(false, (120, 40));
    app.go_live();
    assert!(app.live_news(Live::Behind(3)));
    let screen = text(&draw(&app));
    assert!(screen.contains("· store 3 lines behind"), "{screen}");
    assert!(app.live_news(Live::Behind(0)));
    let screen = text(&draw(&app));
    assert!(screen.contains("● live · "), "{screen}");
    assert!(!screen.contains("behind"), "{screen}");
}
