//! Grouped bar charts written as SVG, for the bench report.
//!
//! Text is laid out without system fonts (plotters' built-in estimate), so the
//! widths this module reserves for labels come from [`text_width`], a
//! deliberately generous guess at what a viewer's sans-serif font will take.

use std::error::Error;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One grouped bar chart: for each category on the x axis, one bar per series.
pub(crate) struct Bars {
    pub(crate) title: String,
    /// e.g. "ms (p50)" or "MB"
    pub(crate) y_label: String,
    /// x axis, e.g. function names
    pub(crate) categories: Vec<String>,
    pub(crate) series: Vec<Series>,
    /// y axis logarithmic (values span 1 ms .. 500 ms)
    pub(crate) log_scale: bool,
}

pub(crate) struct Series {
    /// legend entry
    pub(crate) name: String,
    /// one per category; `None` = no bar
    pub(crate) values: Vec<Option<f64>>,
}

/// Distinct colours, one per series (Tableau 10), reused if there are more series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

const FONT: &str = "sans-serif";
// Pixel sizes of the text as it appears in the SVG.
const TITLE_PX: f64 = 18.0;
const LABEL_PX: f64 = 12.0;
const VALUE_PX: f64 = 11.0;

const MIN_WIDTH: u32 = 640;
const BASE_HEIGHT: u32 = 420;
/// Horizontal room for one bar (it grows if its value label is wider).
const MIN_BAR_SLOT: u32 = 34;
/// Space between two categories.
const CATEGORY_GAP: u32 = 18;
const Y_LABEL_AREA: u32 = 66;
const RIGHT_MARGIN: u32 = 20;
const TITLE_AREA: u32 = 34;
const LEGEND_ROW: u32 = 22;
/// Room kept above the tallest bar for its value label.
const HEADROOM_PX: f64 = 22.0;

/// Writes `chart` as an SVG file at `path`, sized to fit the number of categories and series.
pub(crate) fn write_svg(path: &Path, chart: &Bars) -> Result<(), Box<dyn Error>> {
    let layout = Layout::new(chart);
    let root = SVGBackend::new(path, (layout.width, layout.height)).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(layout.header_height);
    draw_header(&header, chart, &layout)?;

    let n = chart.categories.len().max(1) as f64;
    let (min, max) = positive_range(chart);
    if chart.log_scale {
        // Whole decades, with headroom above the tallest bar for its label.
        // (A hair below the decade, so that plotters labels it.)
        let bottom = 10f64.powf(min.log10().floor()) * 0.999;
        let top_log = bottom.log10() + (max.log10() - bottom.log10()).max(1.0) / (1.0 - layout.headroom());
        let top = 10f64.powf(top_log);
        draw_body(&body, chart, &layout, (0.0..n, (bottom..top).log_scale()), bottom)
    } else {
        let top = if max > 0.0 {
            max / (1.0 - layout.headroom())
        } else {
            1.0
        };
        draw_body(&body, chart, &layout, (0.0..n, 0.0..top), 0.0)
    }?;
    root.present()?;
    Ok(())
}

/// Pixel geometry, worked out before drawing so the image is large enough for its labels.
struct Layout {
    width: u32,
    height: u32,
    header_height: u32,
    /// Series names per legend row.
    legend_rows: Vec<Vec<usize>>,
    x_label_area: u32,
    rotate_x_labels: bool,
    plot_height: u32,
}

impl Layout {
    fn new(chart: &Bars) -> Self {
        let n_series = chart.series.len().max(1) as u32;
        let n_categories = chart.categories.len().max(1) as u32;
        let widest_value = chart
            .series
            .iter()
            .flat_map(|s| s.values.iter())
            .filter_map(|v| v.filter(|v| drawable(*v)))
            .map(|v| text_width(&format_value(v), VALUE_PX))
            .fold(0.0, f64::max);
        let bar_slot = MIN_BAR_SLOT.max(widest_value.ceil() as u32 + 4);
        let category_width = CATEGORY_GAP + n_series * bar_slot;
        let width = (Y_LABEL_AREA + n_categories * category_width + RIGHT_MARGIN).max(MIN_WIDTH);
        let plot_width = width - Y_LABEL_AREA - RIGHT_MARGIN;
        let actual_category_width = f64::from(plot_width) / f64::from(n_categories);

        let widest_category = chart
            .categories
            .iter()
            .map(|c| text_width(c, LABEL_PX))
            .fold(0.0, f64::max);
        let rotate_x_labels = widest_category > actual_category_width - 6.0;
        let x_label_area = if rotate_x_labels {
            widest_category.ceil() as u32 + 16
        } else {
            30
        };

        let legend_rows = legend_rows(chart, width);
        let header_height = TITLE_AREA + LEGEND_ROW * legend_rows.len() as u32 + 8;
        // The plot itself keeps the height it would have in a 420 px chart with
        // short labels; long, rotated labels make the image taller instead.
        let plot_height = BASE_HEIGHT - TITLE_AREA - LEGEND_ROW - 8 - 30 - 10;
        let height = header_height + plot_height + x_label_area + 10;
        Self {
            width,
            height,
            header_height,
            legend_rows,
            x_label_area,
            rotate_x_labels,
            plot_height,
        }
    }

    /// Fraction of the y range kept free above the tallest bar.
    fn headroom(&self) -> f64 {
        HEADROOM_PX / f64::from(self.plot_height)
    }
}

/// Splits the legend entries into rows that fit the image width.
fn legend_rows(chart: &Bars, width: u32) -> Vec<Vec<usize>> {
    let available = f64::from(width - 2 * RIGHT_MARGIN);
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut row = Vec::new();
    let mut used = 0.0;
    for (i, s) in chart.series.iter().enumerate() {
        let entry = legend_entry_width(&s.name);
        if !row.is_empty() && used + entry > available {
            rows.push(std::mem::take(&mut row));
            used = 0.0;
        }
        row.push(i);
        used += entry;
    }
    if !row.is_empty() {
        rows.push(row);
    }
    rows
}

fn legend_entry_width(name: &str) -> f64 {
    14.0 + 6.0 + text_width(name, LABEL_PX) + 24.0
}

fn draw_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    chart: &Bars,
    layout: &Layout,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let centre = (layout.width / 2) as i32;
    let title = FontDesc::new(FontFamily::Name(FONT), TITLE_PX * 1.24, FontStyle::Bold)
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    area.draw_text(&chart.title, &title, (centre, 8))?;

    let label = text_style(LABEL_PX, &BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in layout.legend_rows.iter().enumerate() {
        let row_width: f64 = row.iter().map(|&i| legend_entry_width(&chart.series[i].name)).sum();
        let mut x = (f64::from(layout.width) - row_width + 24.0) / 2.0;
        let y = (TITLE_AREA + LEGEND_ROW * r as u32 + LEGEND_ROW / 2) as i32;
        for &i in row {
            let colour = PALETTE[i % PALETTE.len()];
            let x0 = x as i32;
            area.draw(&Rectangle::new([(x0, y - 7), (x0 + 14, y + 7)], colour.filled()))?;
            area.draw_text(&chart.series[i].name, &label, (x0 + 20, y))?;
            x += legend_entry_width(&chart.series[i].name);
        }
    }
    Ok(())
}

fn draw_body<DB, Y>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    chart: &Bars,
    layout: &Layout,
    (x_range, y_range): (std::ops::Range<f64>, Y),
    bottom: f64,
) -> Result<(), Box<dyn Error>>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut ctx = ChartBuilder::on(area)
        .margin_right(RIGHT_MARGIN)
        .margin_bottom(10)
        .x_label_area_size(layout.x_label_area)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x_range, y_range)?;

    let tick_format = |v: &f64| format_tick(*v);
    ctx.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&tick_format)
        .y_label_style(text_style(LABEL_PX, &BLACK))
        .y_desc(chart.y_label.as_str())
        .axis_desc_style(text_style(LABEL_PX, &BLACK))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .draw()?;

    let n_series = chart.series.len().max(1) as f64;
    // In x units: a category spans 1, its bars share all of it but the gap.
    let (plot_x, _) = ctx.plotting_area().get_pixel_range();
    let category_px = (plot_x.end - plot_x.start) as f64 / chart.categories.len().max(1) as f64;
    let gap = f64::from(CATEGORY_GAP) / category_px;
    let slot = (1.0 - gap) / n_series;
    let value_style = text_style(VALUE_PX, &BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));

    for (j, series) in chart.series.iter().enumerate() {
        let colour = PALETTE[j % PALETTE.len()];
        for (i, value) in series.values.iter().enumerate().take(chart.categories.len()) {
            let Some(v) = value.filter(|v| drawable(*v) && *v > bottom) else {
                continue;
            };
            let left = i as f64 + gap / 2.0 + slot * j as f64;
            let right = left + slot * 0.88;
            ctx.draw_series(std::iter::once(Rectangle::new(
                [(left, bottom), (right, v)],
                colour.filled(),
            )))?;
            let (x, y) = ctx.backend_coord(&((left + right) / 2.0, v));
            area.draw_text(&format_value(v), &value_style, (x - area_x(area), y - 3 - area_y(area)))?;
        }
    }

    // Category names, centred under their group; vertical if they would overlap.
    let label = if layout.rotate_x_labels {
        text_style(LABEL_PX, &BLACK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center))
    } else {
        text_style(LABEL_PX, &BLACK).pos(Pos::new(HPos::Center, VPos::Top))
    };
    for (i, name) in chart.categories.iter().enumerate() {
        let (x, y) = ctx.backend_coord(&(i as f64 + 0.5, bottom));
        area.draw_text(name, &label, (x - area_x(area), y + 8 - area_y(area)))?;
    }
    Ok(())
}

/// Offsets of a drawing area in the image, to turn chart coordinates into area ones.
fn area_x<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>) -> i32 {
    area.get_base_pixel().0
}

fn area_y<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>) -> i32 {
    area.get_base_pixel().1
}

/// A text style whose glyphs are `px` pixels high in the SVG (plotters writes `size / 1.24`).
fn text_style(px: f64, colour: &RGBColor) -> TextStyle<'static> {
    (FONT, px * 1.24).into_font().color(colour)
}

/// A generous estimate of the width of `text` in a sans-serif font of `px` pixels.
fn text_width(text: &str, px: f64) -> f64 {
    text.chars().count() as f64 * px * 0.58
}

/// Whether a bar can be drawn for `v`: zero, negative and non-finite values get none.
fn drawable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Smallest and largest drawable value, `(1, 1)` if there is none.
fn positive_range(chart: &Bars) -> (f64, f64) {
    let values = chart
        .series
        .iter()
        .flat_map(|s| s.values.iter().take(chart.categories.len()));
    let (min, max) = values
        .filter_map(|v| v.filter(|v| drawable(*v)))
        .fold((f64::INFINITY, 0.0f64), |(min, max), v| (min.min(v), max.max(v)));
    if min.is_finite() { (min, max) } else { (1.0, 1.0) }
}

/// The label above a bar: one decimal, two significant digits under 1, none from 1000.
fn format_value(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        let decimals = (1 - v.log10().floor() as i32).clamp(2, 6) as usize;
        format!("{v:.decimals$}")
    }
}

/// A y axis tick: as few digits as the value needs.
fn format_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".to_owned();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(log_scale: bool, missing: bool) -> Bars {
        Bars {
            title: "Cold start".to_owned(),
            y_label: "ms (p50)".to_owned(),
            categories: vec![
                "find-user-by-email".to_owned(),
                "create-user".to_owned(),
                "floor-sdk-get-item".to_owned(),
            ],
            series: vec![
                Series {
                    name: "init".to_owned(),
                    values: vec![Some(3.7), if missing { None } else { Some(0.42) }, Some(0.0)],
                },
                Series {
                    name: "first invoke".to_owned(),
                    values: vec![Some(120.5), Some(12.0), Some(480.0)],
                },
            ],
            log_scale,
        }
    }

    fn check(chart: &Bars) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.svg");
        write_svg(&path, chart).unwrap();
        assert!(path.exists());
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for name in chart.categories.iter().chain(chart.series.iter().map(|s| &s.name)) {
            assert!(svg.contains(name.as_str()), "{name} missing");
        }
    }

    #[test]
    fn linear_chart_has_categories_and_series() {
        let chart = sample(false, false);
        check(&chart);
    }

    #[test]
    fn log_chart_skips_missing_values() {
        let chart = sample(true, true);
        check(&chart);
    }

    #[test]
    fn empty_chart_does_not_fail() {
        let chart = Bars {
            title: "Empty".to_owned(),
            y_label: "MB".to_owned(),
            categories: Vec::new(),
            series: Vec::new(),
            log_scale: true,
        };
        check(&chart);
        let chart = Bars {
            log_scale: false,
            ..chart
        };
        check(&chart);
    }

    #[test]
    fn value_labels() {
        assert_eq!(format_value(3.74), "3.7");
        assert_eq!(format_value(0.42), "0.42");
        assert_eq!(format_value(0.042), "0.042");
        assert_eq!(format_value(1234.4), "1234");
        assert_eq!(format_tick(500.0), "500");
        assert_eq!(format_tick(0.5), "0.5");
        assert_eq!(format_tick(2.0), "2");
    }
}
